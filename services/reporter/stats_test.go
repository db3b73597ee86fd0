package reporter

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

func ep(at time.Time, heldOut, success bool, versions ...uint64) *eventspb.Episode {
	split := eventspb.Split_SPLIT_TRAIN
	if heldOut {
		split = eventspb.Split_SPLIT_TEST
	}
	return &eventspb.Episode{Envelope: &eventspb.Envelope{ProducedAtUnixNano: at.UnixNano()}, Tier: eventspb.Tier_TIER_EASY,
		Split: split, Success: success, PolicyVersionsUsed: versions, PolicyName: "default"}
}

func TestStatsRatesCurveAndTimeToTarget(t *testing.T) {
	start := time.Unix(1000, 0)
	s := NewStats(start)
	// Minute 0-1: random policy fails held-out; minute 1-2: it succeeds.
	for i := range 20 {
		s.AddEpisode(ep(start.Add(time.Duration(i)*3*time.Second), true, false, 0))
	}
	for i := range 20 {
		s.AddEpisode(ep(start.Add(time.Minute+time.Duration(i)*3*time.Second), true, true, 3, 4))
	}
	s.AddEpisode(&eventspb.Episode{PolicyName: "oracle", Success: true}) // a demonstration: not counted
	s.AddEpisode(&eventspb.Episode{Aborted: true})                       // aborted: not counted
	if s.Episodes() != 40 || s.demos != 1 || s.aborted != 1 {
		t.Fatalf("episodes %d demos %d aborted %d", s.Episodes(), s.demos, s.aborted)
	}
	if r := s.RandomBaseline(eventspb.Tier_TIER_EASY, true); r.N != 20 || r.Success != 0 {
		t.Errorf("random baseline %+v; want 0 of 20", r)
	}
	if r := s.Recent(eventspb.Tier_TIER_EASY, true, 10, start.Add(2*time.Minute)); r.Value() != 1 {
		t.Errorf("recent rate at the end %v; want 1", r.Value())
	}
	if r := s.Recent(eventspb.Tier_TIER_EASY, true, 10, start.Add(59*time.Second)); r.Value() != 0 {
		t.Errorf("recent rate after one minute %v; want 0", r.Value())
	}
	d, ok := s.TimeTo(eventspb.Tier_TIER_EASY, 0.8, 10)
	// The 8th success of minute 2 makes 8 of the last 10.
	if !ok || d != time.Minute+7*3*time.Second {
		t.Errorf("time to 80%% = %v (%v); want 1m21s", d, ok)
	}
	curve := s.Curve(eventspb.Tier_TIER_EASY, true, 10, 30*time.Second, start.Add(2*time.Minute))
	if len(curve) != 4 || curve[0].Value != 0 || curve[3].Value != 1 {
		t.Errorf("curve %+v", curve)
	}
}

func TestStatsPropagation(t *testing.T) {
	start := time.Unix(1000, 0)
	s := NewStats(start)
	s.AddWeights(1, start)
	s.AddWeights(2, start.Add(10*time.Second))
	// Two actors: a serves v1 after 100ms, b after 300ms; v2 after 1s and 2s.
	s.AddAction("a/executor-0", 0, start.Add(50*time.Millisecond))
	s.AddAction("a/executor-1", 1, start.Add(100*time.Millisecond))
	s.AddAction("b/executor-0", 1, start.Add(300*time.Millisecond))
	s.AddAction("a/executor-0", 2, start.Add(11*time.Second))
	s.AddAction("b/executor-3", 2, start.Add(12*time.Second))
	p50, p99, n := s.Propagation()
	if n != 2 || p50 != 300*time.Millisecond || p99 != 2*time.Second {
		t.Errorf("propagation p50 %v p99 %v over %d; want 300ms, 2s over 2", p50, p99, n)
	}
}

func TestWriteReport(t *testing.T) {
	start := time.Unix(1000, 0)
	s := NewStats(start)
	for i := range 30 {
		s.AddEpisode(ep(start.Add(time.Duration(i)*4*time.Second), i%2 == 0, i > 10, 1))
	}
	dir := t.TempDir()
	paths, err := WriteReport(dir, s, start.Add(2*time.Minute), 10, map[string]string{"algo": "ppo"})
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| easy |", "![learning curve](curve.png)", "- algo: ppo", "time to 80% held-out"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	f, err := os.Open(filepath.Join(dir, "curve.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("curve.png: %v", err)
	}
}

// TestStatsLanguageModel: a language model's actions give the cost line,
// and its version-0 episodes are not the random-init network's.
func TestStatsLanguageModel(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := NewStats(t0)
	s.AddEpisode(ep(t0.Add(time.Second), true, true, 0, 0))
	if r := s.RandomBaseline(eventspb.Tier_TIER_EASY, true); r.N != 1 {
		t.Fatalf("features run: random-init baseline %+v, want the version-0 episode", r)
	}
	if l := s.LM().Line(time.Minute); l != "" {
		t.Fatalf("a run without a language model has a cost line %q", l)
	}
	s.AddLM(&eventspb.LMOutput{PromptTokens: 600, Tokens: []string{"a", "b"}, TokenLogprobs: []float32{-1, -2}, LatencyMs: 900})
	s.AddLM(&eventspb.LMOutput{PromptTokens: 400, Tokens: []string{"c"}, TokenLogprobs: []float32{-1}, LatencyMs: 100, Invalid: true})
	if r := s.RandomBaseline(eventspb.Tier_TIER_EASY, true); r.N != 0 {
		t.Errorf("openai run: version-0 episodes counted as the random-init policy: %+v", r)
	}
	if got, want := s.LM().Line(10*time.Second), "lm 100 tok/s, 500 prompt + 1.5 output tokens and 500 ms a step, 50% invalid"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}
