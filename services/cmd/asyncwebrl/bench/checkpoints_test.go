package bench

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// A checkpoint is the newest version published by its time, with the run's
// progress then; none before the first version.
func TestCheckpointerList(t *testing.T) {
	c := newCheckpointer(time.Minute)
	onnx := func(v int) []byte { return []byte(fmt.Sprint("model-", v)) }
	c.addVersion(70*time.Second, 3, onnx(3))
	c.addVersion(80*time.Second, 5, onnx(5))
	c.addVersion(100*time.Second, 4, onnx(4)) // late out of order: older
	c.addVersion(130*time.Second, 9, onnx(9))
	c.addVersion(200*time.Second, 12, nil) // no model: never a checkpoint
	for i, at := range []time.Duration{10, 50, 90, 119, 150, 170} {
		c.addProgress(at*time.Second, i+1, 10*(i+1))
	}
	c.addProgress(60*time.Second, 3, 25) // out of order: sorted
	cps := c.list(4*time.Minute + time.Second)
	var got []string
	for _, cp := range cps {
		got = append(got, fmt.Sprintf("%s v%d %s %d/%d", cp.at, cp.version, cp.onnx, cp.episodes, cp.steps))
	}
	want := []string{"2m0s v5 model-5 4/40", "3m0s v9 model-9 6/60", "4m0s v9 model-9 6/60"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("checkpoints %q, want %q", got, want)
	}
	if (*checkpointer)(nil).list(time.Hour) != nil {
		t.Error("checkpoints without a checkpointer")
	}
}

// The first checkpoint at the target counts when the next confirms it (or
// it is the last); an unconfirmed crossing does not.
func TestCheckpointTarget(t *testing.T) {
	cps := func(s ...float64) []checkpoint {
		var out []checkpoint
		for i, v := range s {
			out = append(out, checkpoint{at: time.Duration(i+1) * time.Minute, success: v})
		}
		return out
	}
	for _, c := range []struct {
		s    []float64
		want int
	}{
		{[]float64{0.2, 0.8, 0.6, 0.7, 0.75}, 3},
		{[]float64{0.2, 0.5, 0.71}, 2},
		{[]float64{0.2, 0.5, 0.6}, -1},
		{[]float64{0.9, 0.9}, 0},
		{[]float64{0.3, 0.8, 0.6}, -1},
	} {
		k, ok := checkpointTarget(cps(c.s...), 0.7)
		if k != c.want || ok != (c.want >= 0) {
			t.Errorf("%v: checkpoint %d %v, want %d", c.s, k, ok, c.want)
		}
	}
	// The judged run takes the checkpoint's time and progress; without one
	// it did not reach the target, whatever its own judge said.
	r := trainRun{reached: true, toTarget: 5 * time.Minute, wall: 6 * time.Minute, allSteps: 900,
		checkpoints: []checkpoint{{at: time.Minute, success: 0.5, steps: 100, episodes: 10}, {at: 2 * time.Minute, success: 0.8, steps: 250, episodes: 30}, {at: 3 * time.Minute, success: 0.9}}}
	r.judgeCheckpoints(0.7)
	if !r.reached || r.toTarget != 2*time.Minute || r.steps != 250 || r.episodes != 30 {
		t.Errorf("judged %v at %s, %d steps, %d episodes; want 2m0s, 250, 30", r.reached, r.toTarget, r.steps, r.episodes)
	}
	r.judgeCheckpoints(0.95)
	if r.reached || r.toTarget != 6*time.Minute || r.steps != 900 {
		t.Errorf("judged %v at %s, %d steps; want not reached, the whole run", r.reached, r.toTarget, r.steps)
	}
	if s := fmtCheckpoints(append(r.checkpoints, checkpoint{at: 4 * time.Minute, success: -1})); s != "1m0s v0 50%, 2m0s v0 80%, 3m0s v0 90%" {
		t.Errorf("line %q", s)
	}
}

// --eval-every is 0 or at least 10s; the defaults are 1m and 10 episodes.
func TestEvalFlags(t *testing.T) {
	bt, err := parseTrainFlags(map[string]string{})
	if err != nil || bt.evalEvery != time.Minute || bt.evalEpisodes != 10 {
		t.Fatalf("defaults %s %d, %v", bt.evalEvery, bt.evalEpisodes, err)
	}
	if bt, err := parseTrainFlags(map[string]string{"eval-every": "0", "eval-episodes": "20"}); err != nil || bt.evalEvery != 0 || bt.evalEpisodes != 20 {
		t.Errorf("0 and 20: %s %d, %v", bt.evalEvery, bt.evalEpisodes, err)
	}
	for _, v := range []string{"5s", "-1m", "soon"} {
		if _, err := parseTrainFlags(map[string]string{"eval-every": v}); err == nil {
			t.Errorf("--eval-every %s accepted", v)
		}
	}
	if _, err := parseTrainFlags(map[string]string{"eval-episodes": "0"}); err == nil {
		t.Error("--eval-episodes 0 accepted")
	}
}

// --stop is cap (the default) or judge.
func TestStopFlag(t *testing.T) {
	bt, err := parseTrainFlags(map[string]string{})
	if err != nil || bt.stop != "cap" {
		t.Fatalf("default %q, %v", bt.stop, err)
	}
	if bt, err := parseTrainFlags(map[string]string{"stop": "judge"}); err != nil || bt.stop != "judge" {
		t.Errorf("judge: %q, %v", bt.stop, err)
	}
	if _, err := parseTrainFlags(map[string]string{"stop": "soon"}); err == nil {
		t.Error("--stop soon accepted")
	}
}

// A checkpoint lists its tasks for a small task set, and the run its
// training steps per task, demonstrations and held-out episodes left out.
func TestTaskBreakdown(t *testing.T) {
	cp := checkpoint{at: time.Minute, version: 4, success: 0.7, tasks: map[string][2]int{"miniwob/b": {5, 10}, "miniwob/a": {9, 10}}}
	if s := fmtCheckpoints([]checkpoint{cp}); s != "1m0s v4 70% (a 9/10, b 5/10)" {
		t.Errorf("line %q", s)
	}
	many := map[string][2]int{}
	for i := range maxTasksShown + 1 {
		many[fmt.Sprint(i)] = [2]int{1, 1}
	}
	if s := fmtTasks(many); s != "" {
		t.Errorf("%d tasks listed: %q", len(many), s)
	}

	start := time.Now()
	w := newTargetWatch(start, trainFlags{target: 0.8, window: 4, hold: 1, tier: catalog.Easy})
	env := func(src eventspb.Source) *eventspb.Envelope {
		return &eventspb.Envelope{ProducedAtUnixNano: start.UnixNano(), Source: src}
	}
	for _, ep := range []*eventspb.Episode{
		{Envelope: env(eventspb.Source_SOURCE_POLICY), Family: "miniwob/long", Split: eventspb.Split_SPLIT_TRAIN, Length: 6},
		{Envelope: env(eventspb.Source_SOURCE_POLICY), Family: "miniwob/short", Split: eventspb.Split_SPLIT_TRAIN, Length: 2},
		{Envelope: env(eventspb.Source_SOURCE_POLICY), Family: "miniwob/long", Split: eventspb.Split_SPLIT_TRAIN, Length: 6},
		{Envelope: env(eventspb.Source_SOURCE_POLICY), Family: "miniwob/short", Split: eventspb.Split_SPLIT_TEST, Length: 50},
		{Envelope: env(eventspb.Source_SOURCE_DEMO), Family: "miniwob/short", Split: eventspb.Split_SPLIT_TRAIN, Length: 50},
		{Envelope: env(eventspb.Source_SOURCE_POLICY), Family: "miniwob/short", Split: eventspb.Split_SPLIT_TRAIN, Length: 50, Aborted: true},
	} {
		w.add(ep)
	}
	r := w.result("async", time.Minute)
	if s := fmtTaskSteps(r.taskSteps); s != "long 86%, short 14%" {
		t.Errorf("steps by task %q (%v)", s, r.taskSteps)
	}
}

// The checkpoint curves: per mode the median over seeds and the lowest to
// highest at each checkpoint time, and against env steps each run's line
// read where it has one.
func TestCheckpointCurves(t *testing.T) {
	run := func(mode string, pts ...[2]float64) trainRun {
		r := trainRun{mode: mode}
		for i, p := range pts {
			r.checkpoints = append(r.checkpoints, checkpoint{at: time.Duration(i+1) * time.Minute, steps: int(p[0]), success: p[1]})
		}
		return r
	}
	runs := []trainRun{
		run("async", [2]float64{100, 0.2}, [2]float64{300, 0.6}, [2]float64{500, 0.8}),
		run("async", [2]float64{100, 0.4}, [2]float64{200, 0.5}, [2]float64{300, -1}), // the third unevaluated
		run("async", [2]float64{200, 0.0}, [2]float64{400, 0.7}, [2]float64{600, 0.9}),
		run("sync", [2]float64{50, 0.1}, [2]float64{100, 0.3}),
	}
	byTime := curvesByTime(runs)
	if len(byTime) != 2 || byTime[0].name != "async" || byTime[1].name != "sync" {
		t.Fatalf("curves %+v", byTime)
	}
	a := byTime[0]
	want := fmt.Sprint([]float64{1, 2, 3}, []float64{0.2, 0.6, 0.85}, []float64{0, 0.5, 0.8}, []float64{0.4, 0.7, 0.9}, []int{3, 3, 2})
	round := func(xs []float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = math.Round(x*1e6) / 1e6
		}
		return out
	}
	if got := fmt.Sprint(a.x, round(a.med), a.lo, a.hi, a.runs); got != want {
		t.Errorf("async by time %s, want %s", got, want)
	}
	bySteps := curvesBySteps(runs, 6) // 100, 200, ..., 600
	s := bySteps[0]
	// At 300 steps: run 1 0.6, run 2 past its last evaluated checkpoint
	// (200), run 3 halfway from 0.0 to 0.7.
	if s.x[2] != 300 || s.runs[2] != 2 || math.Abs(s.lo[2]-0.35) > 1e-9 || math.Abs(s.hi[2]-0.6) > 1e-9 {
		t.Errorf("async at %v steps: %d runs, %v..%v; want 300, 2, 0.35..0.6", s.x[2], s.runs[2], s.lo[2], s.hi[2])
	}
	if s.x[5] != 600 || s.runs[5] != 1 || s.med[5] != 0.9 {
		t.Errorf("async at %v steps: %d runs, median %v; want 600, 1, 0.9", s.x[5], s.runs[5], s.med[5])
	}
	// Sync's line spans 50..100 steps: read at 6 points there.
	if sy := bySteps[1]; sy.x[0] != 50 || sy.x[5] != 100 || math.Abs(sy.med[1]-0.14) > 1e-9 {
		t.Errorf("sync by steps %v %v", sy.x, sy.med)
	}
	dir := t.TempDir()
	paths, err := writeCheckpointCurves(dir+"/c.png", runs, 0.8)
	if err != nil || len(paths) != 2 || paths[1] != dir+"/c-steps.png" {
		t.Fatalf("wrote %v, %v", paths, err)
	}
	if paths, err := writeCheckpointCurves(dir+"/none.png", []trainRun{{mode: "async"}}, 0.8); err != nil || paths != nil {
		t.Errorf("without checkpoints: %v, %v", paths, err)
	}
}
