package learner

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

func TestReplayBalancesTasksAndEvicts(t *testing.T) {
	r := newReplay(100, 3, FIFO, 1)
	// 90 samples of task a, 10 of task b: balanced draws pick b about half
	// the time, not a tenth.
	for i := range 100 {
		key := "a"
		if i%10 == 0 {
			key = "b"
		}
		r.add(&sample{key: key})
	}
	b := 0
	const draws = 60
	for _, s := range r.batch(draws) {
		if s.key == "b" {
			b++
		}
	}
	if b < draws/4 || b > 3*draws/4 {
		t.Errorf("task b drawn %d of %d times; want about half", b, draws)
	}
	// Capacity keeps the newest.
	r2 := newReplay(10, 0, FIFO, 1)
	for i := range 25 {
		r2.add(&sample{key: "a", ret: float64(i)})
	}
	if r2.len() != 10 || r2.items[0].ret != 15 {
		t.Errorf("after 25 adds to capacity 10: len %d, oldest %v; want 10 and 15", r2.len(), r2.items[0].ret)
	}
	// maxUses evicts.
	r3 := newReplay(10, 2, FIFO, 1)
	r3.add(&sample{key: "a"})
	r3.batch(1)
	r3.batch(1)
	if r3.len() != 0 {
		t.Errorf("a sample used twice with maxUses 2 is still there")
	}
}

func TestPrioritizedReplayPrefersSurprise(t *testing.T) {
	r := newReplay(100, 0, Prioritized, 2)
	hi := &sample{key: "a"}
	r.add(hi)
	for range 9 {
		r.add(&sample{key: "a"})
	}
	for _, s := range r.items {
		s.prio = 0
	}
	hi.prio = 5
	n := 0
	for _, s := range r.batch(200) {
		if s == hi {
			n++
		}
	}
	// weights: 5.05^0.6 ≈ 2.64 vs 0.05^0.6 ≈ 0.17 each: about 63%.
	if n < 100 {
		t.Errorf("high-priority sample drawn %d of 200 times; want most", n)
	}
}

func TestAssemblerReturnsAndGroups(t *testing.T) {
	now := time.Now()
	a := newAssembler(0.5, false, 0, time.Minute)
	s0, s1, s2 := &sample{}, &sample{}, &sample{}
	// Out of order, with a duplicate step.
	if out := a.add("e", "", 1, s1, 0, false, false, now); out != nil {
		t.Fatal("released before done")
	}
	a.add("e", "", 0, s0, 1, false, false, now)
	a.add("e", "", 0, &sample{}, 100, false, false, now) // duplicate step 0: ignored
	out := a.add("e", "", 2, s2, 2, true, false, now)
	if len(out) != 3 || out[0] != s0 || out[2] != s2 {
		t.Fatalf("released %d samples in the wrong order", len(out))
	}
	// ret2 = 2, ret1 = 0 + 0.5·2 = 1, ret0 = 1 + 0.5·1 = 1.5
	if s2.ret != 2 || s1.ret != 1 || s0.ret != 1.5 {
		t.Errorf("returns %v %v %v; want 1.5 1 2", s0.ret, s1.ret, s2.ret)
	}

	g := newAssembler(1, true, 2, time.Minute)
	w, l := &sample{}, &sample{}
	if out := g.add("win", "g1", 0, w, 1, true, false, now); out != nil {
		t.Fatal("a group was released before it was complete")
	}
	out = g.add("lose", "g1", 0, l, 0, true, false, now)
	if len(out) != 2 || !(w.adv > 0.9 && l.adv < -0.9) {
		t.Errorf("group advantages %v / %v; want about +1 / -1", w.adv, l.adv)
	}
	// Equal returns teach nothing.
	if out := releaseGroup(&openGroup{episodes: [][]*sample{{{}}, {{}}}, returns: []float64{1, 1}}); out != nil {
		t.Error("a group with equal returns was released")
	}
	// ... and is counted: its steps are skipped, not lost uncounted.
	if n := g.takeUniform(); n != 0 {
		t.Fatalf("%d uniform steps counted before any uniform group", n)
	}
	g.add("a", "g2", 0, &sample{}, 0, false, false, now)
	g.add("a", "g2", 1, &sample{}, 1, true, true, now)
	if out := g.add("b", "g2", 0, &sample{}, 1, true, true, now); out != nil {
		t.Error("a group with equal returns was released")
	}
	if n := g.takeUniform(); n != 3 {
		t.Errorf("%d uniform steps counted; want 3 (both episodes' steps)", n)
	}
	if n := g.takeUniform(); n != 0 {
		t.Errorf("takeUniform counted %d steps twice", n)
	}
	// An episode that never ends is expired.
	a.add("stuck", "", 0, &sample{}, 0, false, false, now)
	if _, dropped := a.expire(now.Add(2 * time.Minute)); dropped != 1 || a.pending() != 0 {
		t.Errorf("expire dropped %d, %d pending; want 1 and 0", dropped, a.pending())
	}
}

func TestCurriculumPromotesEvaluatesAndBounds(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cu, err := newCurriculum(CurriculumConfig{InFlight: 8, EvalFraction: 0.25, Window: 10, Promote: 0.8, Demos: 3, GroupSize: 2}, log)
	if err != nil {
		t.Fatal(err)
	}
	first := cu.next(0)
	// A GRPO group is never split, so the last one may overshoot by one.
	if len(first) < 8 || len(first) > 9 {
		t.Fatalf("issued %d assignments; want in-flight 8 (+1 for an unsplit group)", len(first))
	}
	if again := cu.next(len(first)); len(again) != 0 {
		t.Fatalf("issued %d more with the queue full", len(again))
	}
	demos := 0
	for i, task := range first {
		if task.GetDemo() {
			demos++
			if i >= 3 || task.GetSplit() != eventspb.Split_SPLIT_TRAIN {
				t.Errorf("demo assignment %d on split %v", i, task.GetSplit())
			}
		}
		if task.GetTier() != eventspb.Tier_TIER_EASY {
			t.Errorf("tier %v before any promotion", task.GetTier())
		}
	}
	if demos != 3 {
		t.Errorf("%d demonstrations; want 3 first", demos)
	}
	// Taken assignments are replaced.
	if n := len(cu.next(len(first) - 3)); n < 2 {
		t.Errorf("issued %d after 3 were taken; want at least 2", n)
	}
	// Many more: eval tasks are greedy on the test site, groups share a seed.
	var eval, train int
	seeds := map[string][]int64{}
	for range 50 {
		for _, task := range cu.pick() {
			if task.GetSplit() == eventspb.Split_SPLIT_TEST {
				eval++
				if !task.GetGreedy() || catalog.SiteSplit(task.GetFamily(), task.GetSite()) != catalog.SplitTest {
					t.Errorf("eval task %s is not greedy on a test site", task.GetTaskId())
				}
				continue
			}
			train++
			if catalog.SiteSplit(task.GetFamily(), task.GetSite()) != catalog.SplitTrain || task.GetGroupSize() != 2 {
				t.Errorf("training task %s: site split or group size %d wrong", task.GetTaskId(), task.GetGroupSize())
			}
			seeds[task.GetGroupId()] = append(seeds[task.GetGroupId()], task.GetSeed())
		}
	}
	if eval == 0 || train == 0 {
		t.Errorf("%d eval and %d training assignments", eval, train)
	}
	for g, ss := range seeds {
		if len(ss) != 2 || ss[0] != ss[1] {
			t.Errorf("group %s seeds %v; want 2 equal", g, ss)
		}
	}
	// Ten easy training successes in a row unlock medium.
	for range 10 {
		cu.finished(&eventspb.Episode{TaskId: "x", Split: eventspb.Split_SPLIT_TRAIN, Tier: eventspb.Tier_TIER_EASY, Success: true})
	}
	if cu.unlocked != catalog.Medium {
		t.Fatalf("unlocked %v after a full window of easy successes; want medium", cu.unlocked)
	}
	medium := 0
	for range 100 {
		for _, task := range cu.pick() {
			if task.GetTier() == eventspb.Tier_TIER_MEDIUM {
				medium++
			}
		}
	}
	if medium == 0 {
		t.Error("no medium task after promotion")
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if _, _, ok, err := loadCheckpoint(dir); ok || err != nil {
		t.Fatalf("empty dir: ok %v err %v", ok, err)
	}
	onnx := []byte("model bytes")
	if err := saveCheckpoint(dir, checkpoint{Policy: "p", Version: 3, Updates: 30}, onnx, 0); err != nil {
		t.Fatal(err)
	}
	if err := saveCheckpoint(dir, checkpoint{Policy: "p", Version: 4, Updates: 40}, append(onnx, '!'), 0); err != nil {
		t.Fatal(err)
	}
	c, b, ok, err := loadCheckpoint(dir)
	if err != nil || !ok || c.Version != 4 || c.Updates != 40 || !bytes.Equal(b, append(onnx, '!')) {
		t.Fatalf("loaded %+v %q ok=%v err=%v", c, b, ok, err)
	}
	if _, ok, err := CheckpointModel(dir, 3); ok || err != nil {
		t.Errorf("version 3 after 4 without keeping: ok %v err %v", ok, err)
	}
}

// TestCheckpointKeepEvery: with keepEvery n the checkpoint dir keeps every
// n-th version's model beside the newest, each readable by version, and
// removes the others as the newest moves on.
func TestCheckpointKeepEvery(t *testing.T) {
	dir := t.TempDir()
	for v := uint64(1); v <= 7; v++ {
		if err := saveCheckpoint(dir, checkpoint{Policy: "p", Version: v}, []byte(fmt.Sprint("model ", v)), 3); err != nil {
			t.Fatal(err)
		}
	}
	var kept []uint64
	for v := uint64(1); v <= 7; v++ {
		b, ok, err := CheckpointModel(dir, v)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			kept = append(kept, v)
			if want := fmt.Sprint("model ", v); string(b) != want {
				t.Errorf("version %d holds %q, want %q", v, b, want)
			}
		}
	}
	if fmt.Sprint(kept) != "[3 6 7]" {
		t.Errorf("kept versions %v, want [3 6 7] (every 3rd and the newest)", kept)
	}
	if c, _, ok, err := loadCheckpoint(dir); err != nil || !ok || c.Version != 7 {
		t.Errorf("checkpoint %+v ok=%v err=%v, want version 7", c, ok, err)
	}
}

func TestParseFlags(t *testing.T) {
	for _, s := range []string{"ppo", "reinforce", "grpo"} {
		if _, err := ParseAlgo(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseAlgo("dqn"); err == nil {
		t.Error("unknown algorithm accepted")
	}
	if _, err := ParseSampling("lifo"); err == nil {
		t.Error("unknown sampling accepted")
	}
}

// TestConfigListsTheLearnersChoices: config checks -algo and -replay
// against its own lists (it is a leaf and cannot import the learner);
// they must be the learner's.
func TestConfigListsTheLearnersChoices(t *testing.T) {
	for what, pair := range map[string][2][]string{
		"-algo":   {config.Algos, asStrings(Algos)},
		"-replay": {config.Samplings, asStrings(Samplings)},
	} {
		if !slices.Equal(pair[0], pair[1]) {
			t.Errorf("config's %s values %v, the learner's %v", what, pair[0], pair[1])
		}
	}
}

func asStrings[T ~string](vals []T) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out
}

// The replay's bytes are its samples' inputs: what it adds, evicts or
// hands out moves them (the soak judges the learner's memory without them).
func TestReplayBytes(t *testing.T) {
	r := newReplay(2, 0, FIFO, 1)
	// A sample's features are packed: the frame dense, the tokens (one
	// set of ten) as their one entry, an index and a value.
	f := &policy.Features{Frame: make([]float32, 3*8*8), CandTokens: make([]int64, 10)}
	for i := range f.Frame {
		f.Frame[i] = 0.25
	}
	f.CandTokens[3] = 7
	lm := &lmSample{prompt: make([]int32, 100), answer: make([]int32, 5), allowed: [][]int32{make([]int32, 3)}}
	r.add(&sample{feats: policy.Pack(f), key: "a"})
	if got, want := r.bytes(), 4*192+4+8; got != want {
		t.Fatalf("one features sample: %d bytes, want %d", got, want)
	}
	r.add(&sample{lm: lm, key: "b"})
	if got, want := r.bytes(), 4*192+4+8+4*108; got != want {
		t.Fatalf("with a language model's sample: %d bytes, want %d", got, want)
	}
	r.add(&sample{lm: lm, key: "c"}) // over capacity: the features sample leaves
	if got, want := r.bytes(), 2*4*108; got != want {
		t.Fatalf("after an eviction: %d bytes, want %d", got, want)
	}
	r.takeAll()
	if r.bytes() != 0 {
		t.Fatalf("empty: %d bytes", r.bytes())
	}
}
