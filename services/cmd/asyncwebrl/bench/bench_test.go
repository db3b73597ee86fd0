package bench

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/loadtest"
	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/reporter"
)

func TestBenchFlags(t *testing.T) {
	f, rest, err := benchFlags([]string{"--events", "5000", "-brokers=b:1", "--min-ratio=0.5", "-log-level", "warn", "--frame-bytes", "4096", "--repeat", "3"})
	if err != nil || f.events != 5000 || f.minRatio != 0.5 || f.frameBytes != 4096 || f.repeat != 3 || strings.Join(rest, " ") != "-brokers=b:1 -log-level warn" {
		t.Fatalf("got %+v %q %v", f, rest, err)
	}
	if f, _, err := benchFlags(nil); err != nil || f.events != 200000 || f.minRatio != 0 || f.frameBytes != loadtest.RealFrameBytes || f.repeat != 1 {
		t.Fatalf("defaults: %+v %v", f, err)
	}
	for _, bad := range [][]string{{"--events", "0"}, {"--events"}, {"--min-ratio", "-1"}, {"-events=x"}, {"--frame-bytes=-1"}, {"--repeat", "0"}} {
		if _, _, err := benchFlags(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Bad flags of bench rollout are usage errors, found before anything
// starts (no browser, broker or webenv is needed to reject them).
func TestRolloutFlagsRejected(t *testing.T) {
	ctx := t.Context()
	for _, args := range [][]string{
		{"--modes", "async,bogus"},
		{"--modes", "async", "--min-ratio", "3"},
		{"--executors", "0"},
		{"--repeat", "0"},
		{"--profile", "web,none", "--min-ratio", "3"},
		{"--profile", "web,bogus"},
		{"--profile", ","},
		{"--modes", ","},
		{"--suites", "builtin:impossible"},
		{"--suites", "bogus"},
		{"--suites", ","},
		{"--suites", "builtin:easy,miniwob", "--min-ratio", "3"},
		{"--executors", "8,x"},
		{"--executors", "8,16", "--min-ratio", "3"},
		{"--executors", ","},
		{"--modes", "async,rawish"},
	} {
		var out, errb strings.Builder
		err := runBenchRollout(ctx, args, &out, &errb)
		var ue cmdkit.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("bench rollout %q: %v, want a usage error", args, err)
		}
	}
	err := runBenchRollout(ctx, []string{"-suite=bogus"}, io.Discard, io.Discard)
	var ue cmdkit.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "invalid -suite") {
		t.Errorf("bench rollout -suite=bogus: %v, want a usage error", err)
	}
}

// --suites names task sets: a suite's schedulable tasks up to a tier, and
// webenv serves the union.
func TestParseTaskSets(t *testing.T) {
	sets, err := parseTaskSets("builtin:easy, miniwob")
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || sets[0].String() != "builtin:easy" || sets[1].String() != "miniwob" {
		t.Fatalf("sets = %v, want builtin:easy and miniwob", sets)
	}
	for _, name := range sets[0].families {
		if f, ok := catalog.LookupFamily(name); !ok || f.Tier != catalog.Easy || catalog.IsMiniWoB(name) {
			t.Errorf("builtin:easy holds %s (%v, found %v)", name, f.Tier, ok)
		}
	}
	if len(sets[0].families) == 0 || len(sets[0].families) >= len(catalog.Schedulable(catalog.SuiteBuiltin)) {
		t.Errorf("builtin:easy has %d families, want some but not all", len(sets[0].families))
	}
	if got, want := len(sets[1].families), len(catalog.Schedulable(catalog.SuiteMiniWoB)); got != want {
		t.Errorf("miniwob has %d tasks, want the %d schedulable ones", got, want)
	}
	for _, name := range sets[1].families {
		if f, _ := catalog.LookupFamily(name); f.Unsupported != "" {
			t.Errorf("miniwob holds %s, which the action space cannot express (%s)", name, f.Unsupported)
		}
	}
	if s := servedSuite(sets); s != catalog.SuiteAll {
		t.Errorf("served suite = %s, want all", s)
	}
	if s := servedSuite(sets[:1]); s != catalog.SuiteBuiltin {
		t.Errorf("served suite of builtin:easy = %s, want builtin", s)
	}
}

// The summary of repeated runs: medians per mode and of the per-run ratios.
func TestRolloutSummaryMedians(t *testing.T) {
	run := func(async, sync float64) []actor.BenchRun {
		return []actor.BenchRun{
			{Mode: actor.ModeAsync, Wall: time.Second, Steps: uint64(async), Cores: 2},
			// Idle 3 of 4 seconds: a ceiling of 4.
			{Mode: actor.ModeSync, Wall: time.Second, Steps: uint64(sync), Cores: 2,
				Split: actor.TimeSplit{Wait: time.Second, Idle: 3 * time.Second}},
		}
	}
	var s rolloutSummary
	s.add(run(20, 10)) // 2.0
	s.add(run(30, 10)) // 3.0
	s.add(run(24, 12)) // 2.0
	if r, ok := s.medianRatio(); !ok || r != 2 {
		t.Fatalf("median ratio = %v, %v; want 2 (the median of the runs' ratios, not of the medians' ratio 24/10)", r, ok)
	}
	if m := median(s.steps[actor.ModeAsync]); m != 24 {
		t.Fatalf("median async steps/s = %v, want 24", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Fatalf("median of an even count = %v, want 2.5", m)
	}
	var out strings.Builder
	if err := printRolloutSummary(&out, []rolloutSummary{s}, []actor.Mode{actor.ModeAsync, actor.ModeSync}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "2.00") || !strings.Contains(out.String(), "async/sync") {
		t.Fatalf("summary lacks the median ratio:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "sync ceiling") || !strings.Contains(out.String(), "4.00") {
		t.Fatalf("summary lacks the baseline's ceiling 1/(1-0.75) = 4:\n%s", out.String())
	}
	if c := (actor.BenchRun{}).Ceiling(); c != 0 {
		t.Fatalf("ceiling of a run without a time split = %v, want 0", c)
	}
}

// bench train's flags: defaults, and bad values are usage errors found
// before anything starts.
func TestBenchTrainFlags(t *testing.T) {
	bt, err := parseTrainFlags(map[string]string{})
	if err != nil || len(bt.modes) != 2 || bt.seeds != 5 || bt.window != 40 || bt.hold != 20 || bt.target != 0.8 || bt.tier != catalog.Easy || bt.cap != 20*time.Minute || bt.repeatAlias {
		t.Fatalf("defaults %+v, %v", bt, err)
	}
	bt, err = parseTrainFlags(map[string]string{"modes": "sync,sync", "seeds": "3", "target": "0.9", "tier": "medium", "cap": "5m", "window": "20", "hold": "1"})
	if err != nil || !slices.Equal(bt.modes, []string{"sync"}) || bt.seeds != 3 || bt.target != 0.9 || bt.tier != catalog.Medium || bt.cap != 5*time.Minute || bt.window != 20 || bt.hold != 1 {
		t.Fatalf("parsed %+v, %v", bt, err)
	}
	bt, err = parseTrainFlags(map[string]string{"latency": "web,heavy,web", "executors": "8,24", "plot": "sweep.png"})
	if err != nil || !slices.Equal(bt.latencies, []string{"web", "heavy"}) || !slices.Equal(bt.executors, []int{8, 24}) || bt.plot != "sweep.png" {
		t.Fatalf("the sweep parsed %+v, %v", bt, err)
	}
	// --repeat, the former name, still sets the runs per mode.
	vals := map[string]string{"repeat": "2"}
	if bt, err = parseTrainFlags(vals); err != nil || bt.seeds != 2 || !bt.repeatAlias || vals["repeat"] != "2" {
		t.Fatalf("--repeat 2: %+v, %v (the caller's map left as it was: %v)", bt, err, vals)
	}
	for _, args := range [][]string{
		{"--modes", "async,lockstep"},
		{"--modes", ","},
		{"--repeat", "0"},
		{"--seeds", "0"},
		{"--seeds", "3", "--repeat", "3"},
		{"--hold", "0"},
		{"--hold", "x"},
		{"--target", "1.5"},
		{"--target", "0"},
		{"--tier", "impossible"},
		{"--cap", "-1m"},
		{"--window", "x"},
		{"--latency", "slow"},
		{"--latency", ","},
		{"--executors", "8,0"},
		{"--executors", "eight"},
	} {
		var out, errb strings.Builder
		var ue cmdkit.UsageError
		if err := runBenchTrain(t.Context(), args, &out, &errb, nil); !errors.As(err, &ue) {
			t.Errorf("bench train %q: %v, want a usage error", args, err)
		}
	}
}

// The summary: per mode the reached count and the medians with their
// intervals, the ratio sync/async, which says when capped runs make it
// a bound, and the throughput ratio, the most async can gain at equal
// steps.
func TestBenchTrainSummary(t *testing.T) {
	bt := trainFlags{modes: []string{"async", "sync"}, target: 0.8}
	run := func(mode string, min int, reached bool) trainRun {
		return trainRun{mode: mode, toTarget: time.Duration(min) * time.Minute, steps: 1000 * min, reached: reached}
	}
	var out strings.Builder
	printTrainSummary(&out, []trainRun{run("async", 4, true), run("sync", 12, true), run("async", 2, true), run("sync", 9, true), run("async", 3, true), run("sync", 10, true)}, bt)
	t.Logf("summary:\n%s", out.String())
	if !strings.Contains(out.String(), "async reached the target 3.33x sooner") || !strings.Contains(out.String(), "95% interval") {
		t.Errorf("medians 3m and 10m: %s", out.String())
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 5 || !strings.Contains(lines[1], "median time") || !strings.Contains(lines[2], "async") || !strings.Contains(lines[2], "3 of 3") ||
		!strings.Contains(lines[2], "3m0s") || !strings.Contains(lines[2], "3000") || !strings.Contains(lines[3], "10m0s") || !strings.Contains(lines[4], "sync/async") {
		t.Errorf("the table lacks a mode's row:\n%s", out.String())
	}
	// The resamples' medians of 2, 3, 4 minutes lie within 2m..4m.
	if !strings.Contains(lines[2], "[2m0s, 4m0s]") {
		t.Errorf("async's interval is not [2m0s, 4m0s]:\n%s", out.String())
	}
	if strings.Contains(out.String(), "throughput") {
		t.Errorf("a throughput line without the runs' rates:\n%s", out.String())
	}
	// With the runs' env steps/s: async's median 30 over sync's 10, the most
	// its time can gain at equal steps.
	out.Reset()
	rated := func(r trainRun, rate float64) trainRun { r.stepsPerSecond = rate; return r }
	printTrainSummary(&out, []trainRun{rated(run("async", 4, true), 27), rated(run("sync", 12, true), 12), rated(run("async", 2, true), 30),
		rated(run("sync", 9, true), 10), rated(run("async", 3, true), 33), rated(run("sync", 10, true), 9)}, bt)
	if !strings.Contains(out.String(), "throughput: async 30.0 env steps/s, sync 10.0: async/sync 3.00x, 95% interval") {
		t.Errorf("the throughput line:\n%s", out.String())
	}
	out.Reset()
	printTrainSummary(&out, []trainRun{{mode: "async", toTarget: 134900 * time.Millisecond, reached: true}}, trainFlags{modes: []string{"async"}, target: 0.8})
	if !strings.Contains(out.String(), "2m15s") || !strings.Contains(out.String(), "1 of 1") || strings.Contains(out.String(), "sync/async") {
		t.Errorf("a median of 134.9 s is printed %q, want 2m15s (rounded, not truncated), no ratio", out.String())
	}
	out.Reset()
	printTrainSummary(&out, []trainRun{run("async", 4, true), run("sync", 20, false)}, bt)
	if !strings.Contains(out.String(), "at least 5.00x sooner") || !strings.Contains(out.String(), "hit the cap in 1 of 1") || !strings.Contains(out.String(), "≥ 20m0s") {
		t.Errorf("a capped sync run: %s", out.String())
	}
	// One capped run of three lies above the median: it stays exact.
	out.Reset()
	printTrainSummary(&out, []trainRun{run("async", 4, true), run("sync", 20, false), run("async", 2, true), run("sync", 9, true), run("async", 3, true), run("sync", 10, true)}, bt)
	if !strings.Contains(out.String(), "2 of 3") || !strings.Contains(out.String(), "3.33x sooner") || strings.Contains(out.String(), "at least") {
		t.Errorf("one capped sync run of three: %s", out.String())
	}
	// Its steps at the cap below the others' could rise past the median:
	// the steps' median is then a lower bound, the time's stays exact.
	out.Reset()
	printTrainSummary(&out, []trainRun{run("async", 4, true), {mode: "sync", toTarget: 20 * time.Minute, steps: 1000}, run("async", 2, true), run("sync", 9, true), run("async", 3, true), run("sync", 10, true)}, bt)
	if lines := strings.Split(out.String(), "\n"); len(lines) < 4 || !strings.Contains(lines[3], "≥ 9000") || strings.Contains(lines[3], "≥ 10m") || !strings.Contains(out.String(), "3.33x sooner") {
		t.Errorf("a capped sync run with few steps: %s", out.String())
	}
	out.Reset()
	printTrainSummary(&out, []trainRun{run("async", 20, false), run("sync", 20, false)}, bt)
	if !strings.Contains(out.String(), "not measured") {
		t.Errorf("a capped async run: %s", out.String())
	}
	// Each run's line gives its own CPU and the machine's (the broker's
	// share is in the machine's); "-" where the machine was not measured.
	out.Reset()
	printTrainRuns(&out, []trainRun{{mode: "async", reached: true, cpu: 0.84, machine: 0.99}, {mode: "sync", reached: true, cpu: 0.7}}, bt)
	if lines := strings.Split(out.String(), "\n"); len(lines) < 3 || !strings.Contains(lines[0], "machine") ||
		!strings.Contains(lines[1], "84%") || !strings.Contains(lines[1], "99%") || !strings.Contains(lines[2], " -") {
		t.Errorf("runs lack their machine share:\n%s", out.String())
	}
	// With demonstrations, a run at its target before its first
	// policy-gradient version was taken there by behaviour cloning: marked,
	// and the summary warns; one whose RL came first, or without demos, is
	// not.
	bc := trainRun{mode: "sync", reached: true, demos: true, toTarget: 3 * time.Minute, rlAt: 4 * time.Minute}
	rl := trainRun{mode: "async", reached: true, demos: true, toTarget: 3 * time.Minute, rlAt: 2 * time.Minute, rlVersions: 5}
	never := trainRun{mode: "async", reached: true, demos: true, toTarget: 3 * time.Minute}
	noDemos := trainRun{mode: "async", reached: true, toTarget: 3 * time.Minute}
	if !bc.beforeRL() || rl.beforeRL() || !never.beforeRL() || noDemos.beforeRL() {
		t.Errorf("before RL: BC %v, RL first %v, no RL %v, no demos %v; want true false true false", bc.beforeRL(), rl.beforeRL(), never.beforeRL(), noDemos.beforeRL())
	}
	out.Reset()
	printTrainRuns(&out, []trainRun{rl, bc}, bt)
	if lines := strings.Split(out.String(), "\n"); !strings.Contains(lines[1], " 2m0s ") || strings.Contains(lines[1], "(BC)") || !strings.Contains(lines[2], "3m0s (BC)") {
		t.Errorf("runs' RL start and mark:\n%s", out.String())
	}
	out.Reset()
	printTrainSummary(&out, []trainRun{rl, bc}, bt)
	if !strings.Contains(out.String(), "warning: runs at the target before their first policy-gradient update (1 sync, marked (BC))") {
		t.Errorf("no warning for the BC run:\n%s", out.String())
	}
	out.Reset()
	printTrainSummary(&out, []trainRun{rl, noDemos}, bt)
	if strings.Contains(out.String(), "warning") {
		t.Errorf("a warning without a BC run:\n%s", out.String())
	}
}

// --executors takes a sweep; the efficiency is async steps/s over N times
// one executor's alone.
func TestRolloutSweep(t *testing.T) {
	counts, err := parseCounts("8, 16,8,32")
	if err != nil || !slices.Equal(counts, []int{8, 16, 32}) {
		t.Fatalf("counts %v, %v", counts, err)
	}
	var s rolloutSummary
	s.executors = 8
	s.addEfficiency([]actor.BenchRun{{Mode: actor.ModeAsync, Wall: time.Second, Steps: 36}, {Mode: actor.ModeSync, Wall: time.Second, Steps: 10}}, 8, 5)
	if len(s.eff) != 1 || s.eff[0] != 0.9 {
		t.Fatalf("efficiency %v, want 36/(8×5) = 0.9", s.eff)
	}
	s.add([]actor.BenchRun{{Mode: actor.ModeAsync, Wall: time.Second, Steps: 36, Cores: 2, Machine: 0.97}, {Mode: actor.ModeRaw, Wall: time.Second, Steps: 60, Cores: 2}})
	var out strings.Builder
	if err := printRolloutSummary(&out, []rolloutSummary{s}, []actor.Mode{actor.ModeAsync, actor.ModeRaw}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "async machine") || !strings.Contains(out.String(), "97%") {
		t.Fatalf("summary lacks async's machine share 97%%:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "efficiency") || !strings.Contains(out.String(), "0.90") || !strings.Contains(out.String(), "async/raw") || !strings.Contains(out.String(), "0.60") {
		t.Fatalf("summary lacks the efficiency 0.90 or async/raw 0.60:\n%s", out.String())
	}
	out.Reset()
	if err := printRolloutRuns(&out, []actor.BenchRun{{Mode: actor.ModeAsync, Wall: time.Second, Steps: 36}, {Mode: actor.ModeRaw, Wall: time.Second, Steps: 60}}, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ratio async/raw steps/s: 0.60") {
		t.Fatalf("run lacks the raw ratio:\n%s", out.String())
	}
	out.Reset()
	if err := printRolloutRuns(&out, []actor.BenchRun{{Mode: actor.ModeAsync, Wall: time.Second, Steps: 36}, {Mode: modeAsyncPairs, Wall: time.Second, Steps: 24}}, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ratio async/async-pairs steps/s: 1.50") {
		t.Fatalf("run lacks the settler's ratio:\n%s", out.String())
	}
}

// bench report's sections and plots: a bad section is a usage error; the
// rollout and train plots are written and linked from the document.
func TestBenchReportPlots(t *testing.T) {
	if got, err := parseSections(""); err != nil || len(got) != 5 {
		t.Fatalf("default sections %v, %v", got, err)
	}
	if got, err := parseSections("train, joiner"); err != nil || !slices.Equal(got, []string{"train", "joiner"}) {
		t.Fatalf("sections %v, %v", got, err)
	}
	var out, errb strings.Builder
	var ue cmdkit.UsageError
	if err := runBenchReport(t.Context(), []string{"--sections", "train,sightseeing"}, &out, &errb, nil); !errors.As(err, &ue) {
		t.Fatalf("an unknown section: %v, want a usage error", err)
	}

	dir := t.TempDir()
	var doc strings.Builder
	var s4, s8 rolloutSummary
	s4.executors, s8.executors = 4, 8
	s4.add([]actor.BenchRun{{Mode: actor.ModeAsync, Wall: time.Second, Steps: 20, Cores: 2}, {Mode: actor.ModeSync, Wall: time.Second, Steps: 10, Cores: 2}})
	s8.add([]actor.BenchRun{{Mode: actor.ModeAsync, Wall: time.Second, Steps: 35, Cores: 2}, {Mode: actor.ModeSync, Wall: time.Second, Steps: 12, Cores: 2}})
	if err := rolloutPlots(&doc, dir, []rolloutSummary{s4, s8}); err != nil {
		t.Fatal(err)
	}
	runs := []trainRun{
		{mode: "async", seed: 1, reached: true, toTarget: 3 * time.Minute, curve: []reporter.Point{{Minutes: 1, Value: 0.2}, {Minutes: 2, Value: 0.6}, {Minutes: 3, Value: 0.85}},
			propagation: []time.Duration{80 * time.Millisecond, 120 * time.Millisecond, 400 * time.Millisecond}},
		{mode: "sync", seed: 1, toTarget: 10 * time.Minute, curve: []reporter.Point{{Minutes: 1, Value: 0.1}, {Minutes: 5, Value: 0.4}}},
	}
	if err := trainPlots(&doc, dir, runs); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"rollout_steps.png", "rollout_cpu.png", "train_curves.png", "propagation.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
		if !strings.Contains(doc.String(), "]("+f+")") {
			t.Errorf("the document does not show %s:\n%s", f, doc.String())
		}
	}
	if !strings.Contains(doc.String(), "async/sync") || !strings.Contains(doc.String(), "not reached in 10m0s") {
		t.Errorf("the document lacks the tables:\n%s", doc.String())
	}
}
