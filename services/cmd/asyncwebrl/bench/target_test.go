package bench

import (
	"math"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// noisyOutcomes cross a window of 4 at 3 of 4 briefly at 3 and at 6, and
// for good at 8 (held through 10):
//
//	i        0 1 2 3 4 5 6 7 8 9 10
//	outcome  1 1 0 1 0 1 1 0 1 1 1
//	window   - - - 3 2 2 3 2 3 3 3   (successes of the last 4)
var noisyOutcomes = []bool{true, true, false, true, false, true, true, false, true, true, true}

// The held target on a noisy sequence: the brief crossings do not count,
// the one that holds does, timed from when it began.
func TestHeldTarget(t *testing.T) {
	judge := func(hold int) (began, confirmed int) {
		h := newHeldTarget(0.75, 4, hold)
		began, confirmed = -1, -1
		for i, ok := range noisyOutcomes {
			b, c := h.add(ok)
			if b {
				began = i
			}
			if c {
				return began, i
			}
		}
		return began, confirmed
	}
	if b, c := judge(3); b != 8 || c != 10 {
		t.Errorf("hold 3: began %d, confirmed %d; want the stretch from 8 confirmed at 10", b, c)
	}
	// Hold 1 is the former rule: the first crossing.
	if b, c := judge(1); b != 3 || c != 3 {
		t.Errorf("hold 1: began %d, confirmed %d; want the first crossing, 3", b, c)
	}
	// A hold longer than the good stretch is never confirmed.
	if _, c := judge(4); c != -1 {
		t.Errorf("hold 4: confirmed at %d, want never", c)
	}
}

// The watch on the same outcomes, with training episodes between the
// held-out ones: the time, episodes and steps to the target are those at
// the held stretch's start, and the run is stopped once it is confirmed.
func TestTargetWatchHeld(t *testing.T) {
	// Near now: the result draws the learning curve from start to now,
	// every 15 s.
	start := time.Now().Add(-2 * time.Hour)
	w := newTargetWatch(start, trainFlags{target: 0.75, window: 4, hold: 3, tier: catalog.Easy})
	at := func(d time.Duration) *eventspb.Envelope {
		return &eventspb.Envelope{ProducedAtUnixNano: start.Add(d).UnixNano()}
	}
	for i, ok := range noisyOutcomes {
		// A training episode and a held-out one of another tier, which
		// the judge leaves out, then the held-out one of the tier.
		w.add(&eventspb.Episode{Envelope: at(time.Duration(i) * time.Minute), Tier: eventspb.Tier_TIER_EASY, Split: eventspb.Split_SPLIT_TRAIN, Length: 5, Success: true})
		w.add(&eventspb.Episode{Envelope: at(time.Duration(i) * time.Minute), Tier: eventspb.Tier_TIER_MEDIUM, Split: eventspb.Split_SPLIT_TEST, Length: 5, Success: true})
		w.add(&eventspb.Episode{Envelope: at(time.Duration(i+1) * time.Minute), Tier: eventspb.Tier_TIER_EASY, Split: eventspb.Split_SPLIT_TEST, Length: 10, Success: ok})
		select {
		case <-w.reached:
			if i != 10 {
				t.Fatalf("reached after held-out episode %d, want 10", i)
			}
		default:
			if i == 10 {
				t.Fatal("not reached after the held stretch")
			}
		}
	}
	r := w.result("async", 20*time.Minute)
	// Held-out episode 8 finished at 9 minutes, after 9 rounds of 3
	// episodes (20 steps each).
	if !r.reached || r.toTarget != 9*time.Minute || r.episodes != 27 || r.steps != 180 {
		t.Errorf("reached %v at %s, %d episodes, %d steps; want 9m0s, 27, 180", r.reached, r.toTarget, r.episodes, r.steps)
	}
	// An aborted episode counts nowhere.
	w.add(&eventspb.Episode{Envelope: at(time.Hour), Tier: eventspb.Tier_TIER_EASY, Split: eventspb.Split_SPLIT_TEST, Length: 3, Aborted: true})
	if r := w.result("async", time.Hour); r.allSteps != 11*20 {
		t.Errorf("all steps %d, want %d (the aborted episode left out)", r.allSteps, 11*20)
	}
}

// The means of what the versions trained on leave out a version whose
// update had no policy sample (the initial weights, behaviour cloning).
func TestVersionMetrics(t *testing.T) {
	var m versionMetrics
	if c, s, b := m.means(); c != 0 || s != 0 || b != 0 {
		t.Errorf("no version: %g %g %g, want zeros", c, s, b)
	}
	m.add(map[string]float64{"loss": 1})
	m.add(map[string]float64{"bc_loss": 2, "clip_frac": 0, "demo_in_batch": 64})
	m.add(map[string]float64{"clip_frac": 0.2, "staleness": 1, "behaviour_capped": 0.01, "policy_samples": 48})
	m.add(map[string]float64{"clip_frac": 0.1, "staleness": 2, "policy_samples": 64})
	c, s, b := m.means()
	if m.n != 2 || math.Abs(c-0.15) > 1e-12 || s != 1.5 || math.Abs(b-0.005) > 1e-12 {
		t.Errorf("n %d, means %g %g %g; want 2 versions, 0.15 1.5 0.005", m.n, c, s, b)
	}
}
