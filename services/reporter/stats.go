package reporter

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// episode is what the report keeps of one finished episode.
type episode struct {
	at      time.Time
	family  string
	tier    eventspb.Tier
	heldOut bool
	success bool
	// raw: the done reward's raw reward (a MiniWoB++ task's score).
	raw float64
	// random: every step was taken by the random-init policy (version 0).
	random bool
}

// Stats accumulates a run's events. It is not safe for concurrent use; the
// reporter guards it.
type Stats struct {
	start    time.Time
	episodes []episode
	demos    int
	aborted  int
	// versions: weights version → publication time.
	versions map[uint64]time.Time
	newest   uint64
	// served: version → actor process → first action stamped with it or
	// a newer one.
	served map[uint64]map[string]time.Time
	// lm: the language-model backends' actions (Action.lm).
	lm LMCost
}

// LMCost sums a language-model policy's generations: what each step costs.
type LMCost struct {
	Actions, Invalid           int
	PromptTokens, OutputTokens int
	RequestMillis              int64
}

// isRandom: e was acted by the random-init network. Version 0 is that
// network's only in a features run: a served language model acts at
// version 0 throughout.
func (s *Stats) isRandom(e episode) bool { return e.random && s.lm.Actions == 0 }

// AddLM records one action a language model chose.
func (s *Stats) AddLM(g *eventspb.LMOutput) {
	s.lm.Actions++
	s.lm.PromptTokens += int(g.GetPromptTokens())
	s.lm.OutputTokens += len(g.GetTokenLogprobs())
	s.lm.RequestMillis += int64(g.GetLatencyMs())
	if g.GetInvalid() {
		s.lm.Invalid++
	}
}

// LM is the run's language-model cost so far (zero without one).
func (s *Stats) LM() LMCost { return s.lm }

// Line is the cost as the progress line and the report say it: tokens a
// second over the run, per step the prompt and output tokens and the
// request's time, and the share of replies that named no valid action.
func (c LMCost) Line(elapsed time.Duration) string {
	if c.Actions == 0 {
		return ""
	}
	n := float64(c.Actions)
	return fmt.Sprintf("lm %.0f tok/s, %.0f prompt + %.1f output tokens and %.0f ms a step, %.0f%% invalid",
		float64(c.PromptTokens+c.OutputTokens)/max(elapsed.Seconds(), 1), float64(c.PromptTokens)/n, float64(c.OutputTokens)/n,
		float64(c.RequestMillis)/n, 100*float64(c.Invalid)/n)
}

// NewStats starts a run at start.
func NewStats(start time.Time) *Stats {
	return &Stats{start: start, versions: map[uint64]time.Time{}, served: map[uint64]map[string]time.Time{}}
}

// AddEpisode records a finished episode summary.
func (s *Stats) AddEpisode(ep *eventspb.Episode) {
	if ep.GetPolicyName() == "oracle" || ep.GetEnvelope().GetSource() == eventspb.Source_SOURCE_DEMO {
		s.demos++
		return
	}
	if ep.GetAborted() {
		s.aborted++
		return
	}
	if f, ok := catalog.LookupFamily(ep.GetFamily()); ok && f.Unsupported != "" {
		// A task beyond the action space is never scheduled; one run by
		// hand is left out of the figures rather than counted as a
		// failure of the policy.
		return
	}
	random := len(ep.GetPolicyVersionsUsed()) > 0
	for _, v := range ep.GetPolicyVersionsUsed() {
		if v != 0 {
			random = false
		}
	}
	s.episodes = append(s.episodes, episode{
		at:      time.Unix(0, ep.GetEnvelope().GetProducedAtUnixNano()),
		family:  ep.GetFamily(),
		tier:    ep.GetTier(),
		heldOut: ep.GetSplit() == eventspb.Split_SPLIT_TEST,
		success: ep.GetSuccess(),
		raw:     ep.GetRawReward(),
		random:  random,
	})
}

// AddWeights records a published version.
func (s *Stats) AddWeights(version uint64, createdAt time.Time) {
	if _, ok := s.versions[version]; ok {
		return
	}
	s.versions[version] = createdAt
	s.newest = max(s.newest, version)
}

// AddAction records which version an actor served at a time. The actor
// process is the producer up to its "/executor-N" suffix: its executors
// share one inference server.
func (s *Stats) AddAction(producer string, version uint64, at time.Time) {
	actor, _, _ := strings.Cut(producer, "/executor-")
	for v := range s.versions {
		if v > version {
			continue
		}
		m := s.served[v]
		if m == nil {
			m = map[string]time.Time{}
			s.served[v] = m
		}
		if first, ok := m[actor]; !ok || at.Before(first) {
			m[actor] = at
		}
	}
}

// Propagation returns the p50 and p99 over versions of the time from a
// version's publication until every actor served it (or a newer one), and
// how many versions were measured.
func (s *Stats) Propagation() (p50, p99 time.Duration, n int) {
	ds := s.PropagationDelays()
	if len(ds) == 0 {
		return 0, 0, 0
	}
	q := func(p float64) time.Duration {
		return ds[min(len(ds)-1, int(math.Ceil(p*float64(len(ds))))-1)]
	}
	return q(0.5), q(0.99), len(ds)
}

// PropagationDelays are, sorted, the times from each version's publication
// until every actor served it (or a newer one), for the versions every
// actor has served.
func (s *Stats) PropagationDelays() []time.Duration {
	actors := map[string]bool{}
	for _, m := range s.served {
		for a := range m {
			actors[a] = true
		}
	}
	var ds []time.Duration
	for v, pub := range s.versions {
		if v == 0 {
			continue
		}
		m := s.served[v]
		if len(m) == 0 || len(m) < len(actors) {
			continue // not yet served everywhere
		}
		var last time.Time
		for _, at := range m {
			if at.After(last) {
				last = at
			}
		}
		ds = append(ds, max(last.Sub(pub), 0))
	}
	slices.Sort(ds)
	return ds
}

// Rate is a success rate over n episodes.
type Rate struct {
	Success, N int
	// Strict counts episodes with raw reward 1 and Raw sums the raw
	// rewards: a MiniWoB++ task's strict success and score (its mean).
	Strict int
	Raw    float64
}

// Score is the mean raw reward, NaN with no episodes.
func (r Rate) Score() float64 {
	if r.N == 0 {
		return math.NaN()
	}
	return r.Raw / float64(r.N)
}

// count adds an episode to r.
func (r *Rate) count(e episode) {
	r.N++
	if e.success {
		r.Success++
	}
	if catalog.StrictSuccess(e.raw) {
		r.Strict++
	}
	r.Raw += e.raw
}

// Value is the rate, NaN with no episodes.
func (r Rate) Value() float64 {
	if r.N == 0 {
		return math.NaN()
	}
	return float64(r.Success) / float64(r.N)
}

// Recent returns the success of the last window episodes of a tier, held-out
// or training, finished before until.
func (s *Stats) Recent(tier eventspb.Tier, heldOut bool, window int, until time.Time) Rate {
	var r Rate
	for i := len(s.episodes) - 1; i >= 0 && r.N < window; i-- {
		e := s.episodes[i]
		if e.tier != tier || e.heldOut != heldOut || e.at.After(until) {
			continue
		}
		r.N++
		if e.success {
			r.Success++
		}
	}
	return r
}

// RandomBaseline is the success of the random-init policy (version 0) on a
// tier's held-out or training sites, all its episodes.
func (s *Stats) RandomBaseline(tier eventspb.Tier, heldOut bool) Rate {
	var r Rate
	for _, e := range s.episodes {
		if s.isRandom(e) && e.tier == tier && e.heldOut == heldOut {
			r.N++
			if e.success {
				r.Success++
			}
		}
	}
	return r
}

// TaskRate is one task's figures at the end of a run.
type TaskRate struct {
	Family string
	Tier   eventspb.Tier
	// HeldOut and Train are the last window episodes of each kind;
	// RandomHeldOut is every held-out episode of the random-init policy.
	HeldOut, Train, RandomHeldOut Rate
}

// ByTask returns, for every task with an episode, its held-out and
// training success over its last window episodes of each finished before
// until, and the random-init policy's held-out success; by tier, then name.
func (s *Stats) ByTask(window int, until time.Time) []TaskRate {
	idx := map[string]int{}
	var out []TaskRate
	for i := len(s.episodes) - 1; i >= 0; i-- {
		e := s.episodes[i]
		if e.family == "" || e.at.After(until) {
			continue
		}
		j, ok := idx[e.family]
		if !ok {
			j = len(out)
			idx[e.family] = j
			out = append(out, TaskRate{Family: e.family, Tier: e.tier})
		}
		t := &out[j]
		r := &t.Train
		if e.heldOut {
			r = &t.HeldOut
		}
		if r.N < window {
			r.count(e)
		}
		if s.isRandom(e) && e.heldOut {
			t.RandomHeldOut.count(e)
		}
	}
	slices.SortFunc(out, func(a, b TaskRate) int {
		if a.Tier != b.Tier {
			return int(a.Tier) - int(b.Tier)
		}
		return strings.Compare(a.Family, b.Family)
	})
	return out
}

// Episodes counts non-demonstration episodes (finished, not aborted).
func (s *Stats) Episodes() int { return len(s.episodes) }

// Point is one sample of a learning curve.
type Point struct {
	Minutes float64
	Value   float64
}

// Curve samples Recent every step from the start to end.
func (s *Stats) Curve(tier eventspb.Tier, heldOut bool, window int, step time.Duration, end time.Time) []Point {
	var out []Point
	for t := s.start.Add(step); !t.After(end.Add(step / 2)); t = t.Add(step) {
		r := s.Recent(tier, heldOut, window, t)
		v := math.NaN()
		if r.N >= min(window, 10) {
			v = r.Value()
		}
		out = append(out, Point{Minutes: t.Sub(s.start).Minutes(), Value: v})
	}
	return out
}

// TimeTo returns when the held-out success of a tier over window episodes
// first reached target (checked at every held-out episode), or false.
func (s *Stats) TimeTo(tier eventspb.Tier, target float64, window int) (time.Duration, bool) {
	return s.timeTo(func(e episode) bool { return e.tier == tier }, target, window)
}

// TaskTimeTo is TimeTo for one task's held-out episodes.
func (s *Stats) TaskTimeTo(family string, target float64, window int) (time.Duration, bool) {
	return s.timeTo(func(e episode) bool { return e.family == family }, target, window)
}

// timeTo is when the held-out episodes that keep holds first reached target
// over window episodes.
func (s *Stats) timeTo(keep func(episode) bool, target float64, window int) (time.Duration, bool) {
	var w []bool
	for _, e := range s.episodes {
		if !e.heldOut || !keep(e) {
			continue
		}
		w = append(w, e.success)
		if len(w) > window {
			w = w[1:]
		}
		if len(w) == window {
			n := 0
			for _, ok := range w {
				if ok {
					n++
				}
			}
			if float64(n)/float64(window) >= target {
				return e.at.Sub(s.start), true
			}
		}
	}
	return 0, false
}
