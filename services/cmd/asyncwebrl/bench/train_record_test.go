package bench

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
)

// recordedRun is a run of cell in mode that reached the target after min
// minutes (or hit the cap, not reached), with a checkpoint a minute.
func recordedRun(cell trainCell, mode string, seed, min int, reached bool) trainRun {
	r := trainRun{cell: cell, mode: mode, seed: seed, toTarget: time.Duration(min) * time.Minute, wall: 6 * time.Minute,
		reached: reached, episodes: 10 * min, steps: 60 * min, allSteps: 360, versions: uint64(4 * min), clipFrac: 0.3,
		taskSteps: map[string]int{"miniwob/ascending-numbers": 360}}
	for k := 1; k <= 6; k++ {
		s := 0.5
		if reached && k >= min {
			s = 0.9
		}
		r.checkpoints = append(r.checkpoints, checkpoint{at: time.Duration(k) * time.Minute, version: uint64(4 * k), episodes: 10 * k,
			steps: 60 * k, success: s, evaluated: 30, tasks: map[string][2]int{"miniwob/ascending-numbers": {int(30 * s), 30}}})
	}
	return r
}

// TestTrainRecordsMerge: runs recorded in two sittings (a cell each, one
// of them in two seed ranges) print as one sweep; a run recorded twice, a
// cell judged two ways (another target, the page's timer off) and a
// malformed line are refused with where they are.
func TestTrainRecordsMerge(t *testing.T) {
	dir := t.TempDir()
	bt := trainFlags{target: 0.8, tier: catalog.Medium, window: 40, hold: 20, cap: 6 * time.Minute, evalEvery: time.Minute, evalEpisodes: 10}
	cfg := &config.Config{Suite: "miniwob"}
	cfg.Learner.Algo = "ppo"
	long := "miniwob/ascending-numbers,miniwob/email-inbox-star-reply"
	web8 := trainCell{latency: "web", executors: 8, tasks: long}
	heavy8 := trainCell{latency: "heavy", executors: 8, tasks: long}
	short := trainCell{latency: "web", executors: 8, tasks: "miniwob/click-button"}
	write := func(name string, runs ...trainRun) string {
		path := filepath.Join(dir, name)
		for _, r := range runs {
			if err := (recorder{path}).write(newRunRecord(r, bt, cfg, uint64(r.seed))); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}
	// Sitting 1: heavy at seeds 1-2, then 3 (another -seed); sitting 2: web.
	a := write("heavy.jsonl", recordedRun(heavy8, "async", 1, 2, true), recordedRun(heavy8, "sync", 1, 6, true),
		recordedRun(heavy8, "async", 2, 3, true), recordedRun(heavy8, "sync", 2, 6, false))
	a2 := write("heavy-3.jsonl", recordedRun(heavy8, "async", 3, 2, true), recordedRun(heavy8, "sync", 3, 6, true))
	b := write("web.jsonl", recordedRun(web8, "async", 1, 2, true), recordedRun(web8, "sync", 1, 4, true),
		recordedRun(short, "async", 1, 1, true), recordedRun(short, "sync", 1, 2, true))
	plot, curves := filepath.Join(dir, "sweep.png"), filepath.Join(dir, "curves.png")
	var out bytes.Buffer
	if err := trainFromRecords([]string{b, a, a2}, plot, curves, &out); err != nil {
		t.Fatal(err)
	}
	t.Logf("merged:\n%s", out.String())
	got := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"10 recorded runs", "3 cells",
		// Cells by task set as first seen, then the profile's delay: web before heavy.
		"cell 1 of 3: latency profile web, 8 executors, tasks " + long,
		"cell 2 of 3: latency profile heavy, 8 executors",
		"cell 3 of 3: latency profile web, 8 executors, tasks miniwob/click-button",
		"async 3 of 3", // heavy's three seeds, from two files, in one summary
		"tasks target steps an episode latency executors",
		"ascending-numbers,email-inbox-star-reply 80% 6.0 web 8 1 of 1 1 of 1 2.00x",
		"click-button 80% 6.0 web 8",
	} {
		if !strings.Contains(got, strings.Join(strings.Fields(want), " ")) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}
	for _, p := range []string{plot, curves} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
	recs, err := readRecords(strings.NewReader(mustRead(t, a)), a)
	if err != nil || len(recs) != 4 {
		t.Fatalf("read back %d records, %v", len(recs), err)
	}
	r := recs[1].run()
	if r.mode != "sync" || r.toTarget != 6*time.Minute || len(r.checkpoints) != 6 || r.checkpoints[5].tasks["miniwob/ascending-numbers"] != [2]int{27, 30} ||
		r.cell != heavy8 || r.taskSteps["miniwob/ascending-numbers"] != 360 {
		t.Errorf("round trip: %+v", r)
	}
	// Charted: a line per executor count and task set, named by its length,
	// and the heavy cell's ratio (a sync run capped) marked as a bound.
	cells, _ := mergeRecords(append(recs, mustRecords(t, b)...), make([]string, 8))
	var all []trainRun
	var list []trainCell
	for _, c := range cells {
		all, list = append(all, c.runs...), append(list, c.cell)
	}
	if names, _ := groupRuns(all); len(names) != 6 || !strings.HasSuffix(names[len(names)-1], ", click-button") {
		t.Errorf("curve groups %q: want a mode per cell, the task set named", names)
	}
	if c := sweepChart(all, list); len(c.Series) != 3 || !strings.Contains(c.Series[0].Name, "(6.0 steps an episode)") || len(c.Series[0].X) != 2 ||
		!strings.HasPrefix(c.Series[2].Name, "≥") || c.Series[2].Y[0] != c.Series[0].Y[1] {
		t.Errorf("chart series %+v", c.Series)
	}

	dup := write("dup.jsonl", recordedRun(heavy8, "sync", 2, 5, true))
	if err := trainFromRecords([]string{a, dup}, "", "", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "sync seed 2 at heavy, 8 executors") || !strings.Contains(err.Error(), "recorded twice") {
		t.Errorf("a run recorded twice: %v", err)
	}
	bt.target = 0.7
	other := write("other.jsonl", recordedRun(heavy8, "async", 4, 2, true))
	if err := trainFromRecords([]string{a, other}, "", "", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "judged differently") || !strings.Contains(err.Error(), "target 0.7") {
		t.Errorf("a cell judged two ways: %v", err)
	}
	// A run without the page's timer never merges with runs under it.
	bt.target = 0.8
	cfg.Actor.MiniWoBTimeLimit, _ = config.ParseMiniWoBTimeLimit("off")
	untimed := write("untimed.jsonl", recordedRun(heavy8, "async", 5, 2, true))
	if err := trainFromRecords([]string{a, untimed}, "", "", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "judged differently") ||
		!strings.Contains(err.Error(), "time limit off") || !strings.Contains(err.Error(), "time limit page") {
		t.Errorf("a cell with and without the page's timer: %v", err)
	}
	// GRPO's two step weights, and two policy backends, never merge.
	cfg.Actor.MiniWoBTimeLimit = 0
	cfg.Learner.Algo, cfg.Learner.GRPONorm = "grpo", "step"
	stepNorm := write("step.jsonl", recordedRun(heavy8, "async", 1, 2, true))
	cfg.Learner.GRPONorm = "trajectory"
	trajNorm := write("trajectory.jsonl", recordedRun(heavy8, "async", 2, 2, true))
	if err := trainFromRecords([]string{stepNorm, trajNorm}, "", "", &bytes.Buffer{}); err == nil ||
		!strings.Contains(err.Error(), "algo grpo (step norm)") || !strings.Contains(err.Error(), "algo grpo (trajectory norm)") {
		t.Errorf("GRPO runs under two norms: %v", err)
	}
	cfg.Learner.Algo, cfg.PolicyBackend = "ppo", "lm"
	lmRuns := write("lm.jsonl", recordedRun(heavy8, "async", 6, 2, true))
	if err := trainFromRecords([]string{a, lmRuns}, "", "", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "policy backend lm") {
		t.Errorf("runs of two policy backends: %v", err)
	}
	cfg.PolicyBackend = "features"
	if rec := newRunRecord(recordedRun(heavy8, "async", 7, 2, true), bt, cfg, 7); rec.PolicyBackend != "" || rec.GRPONorm != "" {
		t.Errorf("the default backend and a ppo run record backend %q, norm %q: want neither", rec.PolicyBackend, rec.GRPONorm)
	}
	// A run that published nothing has means over nothing (NaN), as a
	// 12-07 lm sync run did; its record is written all the same.
	empty := recordedRun(heavy8, "sync", 8, 2, false)
	empty.clipFrac, empty.staleness, empty.finalRate, empty.versions = math.NaN(), math.NaN(), math.NaN(), 0
	if err := (recorder{filepath.Join(dir, "empty.jsonl")}).write(newRunRecord(empty, bt, cfg, 8)); err != nil {
		t.Errorf("a run without versions: %v", err)
	} else if got := mustRead(t, filepath.Join(dir, "empty.jsonl")); !strings.Contains(got, `"clip_frac":0,`) || !strings.Contains(got, `"final_rate":0,`) {
		t.Errorf("a run without versions recorded %s: want its empty means as 0", got)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(mustRead(t, b)+"{\"format\": 1, \"mode\": \"fast\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := trainFromRecords([]string{bad}, "", "", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "line 5") || !strings.Contains(err.Error(), `mode "fast"`) {
		t.Errorf("a malformed line: %v", err)
	}
}

// TestBenchTrainFromFlags: --from trains nothing, so the flags of a run are
// refused beside it.
func TestBenchTrainFromFlags(t *testing.T) {
	for _, args := range [][]string{{"--from", "x.jsonl", "--seeds", "3"}, {"--from", "x.jsonl", "-executors=8"}, {"--from", ""}} {
		if _, err := benchTrain(t.Context(), args, &bytes.Buffer{}, &bytes.Buffer{}, nil); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	var out bytes.Buffer
	if _, err := benchTrain(t.Context(), []string{"--from", filepath.Join(t.TempDir(), "none.jsonl")}, &out, &bytes.Buffer{}, nil); err == nil || !strings.Contains(err.Error(), "unable to read the recorded runs") {
		t.Errorf("a missing file: %v", err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustRecords(t *testing.T, path string) []runRecord {
	t.Helper()
	recs, err := readRecords(strings.NewReader(mustRead(t, path)), path)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// FuzzReadRecords: whatever the file holds, reading and merging it ends in
// records or an error, never a panic.
func FuzzReadRecords(f *testing.F) {
	f.Add([]byte(`{"format":1,"suite":"miniwob","tier":"medium","target":0.8,"latency":"web","executors":8,"mode":"async","seed":1,"wall_s":60,"to_target_s":30,"checkpoints":[{"at_s":60,"success":0.9}]}` + "\n"))
	f.Add([]byte("{}\n\n{\"format\":1}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := readRecords(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		cells, err := mergeRecords(recs, make([]string, len(recs)))
		if err != nil {
			return
		}
		for _, c := range cells {
			printTrainRuns(&bytes.Buffer{}, c.runs, c.bt)
			printTrainSummary(&bytes.Buffer{}, c.runs, c.bt)
		}
	})
}
