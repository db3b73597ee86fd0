package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// The slope is fitted on the samples after the warm-up; a series grows
// past its bound when the slope beats the larger of its floor and the
// share of its mean.
func TestSoakJudge(t *testing.T) {
	if s, ok := fitSlope([]float64{0, 1, 2, 3}, []float64{1, 3, 5, 7}); !ok || math.Abs(s-2) > 1e-12 {
		t.Fatalf("slope %v %v, want 2", s, ok)
	}
	if _, ok := fitSlope([]float64{0, 1}, []float64{1, 2}); ok {
		t.Error("a slope from two points")
	}
	series := func(floor float64, vs ...float64) *soakSeries {
		s := &soakSeries{component: "actor", metric: "rss", unit: "MiB", floor: floor}
		for i, v := range vs {
			// One sample in the warm-up (at < 0), then every 0.5 h.
			s.at, s.v = append(s.at, float64(i-1)/2), append(s.v, v)
		}
		return s
	}
	for _, c := range []struct {
		name       string
		s          *soakSeries
		grew, none bool
		slope      float64
	}{
		// The warm-up's 100 → 500 is left out; 500, 510, 520: 20 MiB/h
		// under the 32 MiB floor.
		{"flat after the warm-up", series(32, 100, 500, 510, 520), false, false, 20},
		// 500 → 800 in an hour: 300 MiB/h, above 10% of the mean (65).
		{"a leak", series(32, 100, 500, 650, 800), true, false, 300},
		// Down is never growth.
		{"shrinking", series(32, 900, 800, 600, 400), false, false, -400},
		{"too short", series(32, 100, 500), false, true, 0},
	} {
		v := c.s.judge(10)
		if v.grew != c.grew || v.undersized != c.none || math.Abs(v.slope-c.slope) > 1e-9 {
			t.Errorf("%s: grew %v, too few %v, slope %v; want %v, %v, %v", c.name, v.grew, v.undersized, v.slope, c.grew, c.none, c.slope)
		}
	}
	// The same leak over 20 minutes is printed, not judged.
	short := series(32, 100, 500, 650, 800)
	for i := range short.at {
		short.at[i] /= 3
	}
	if v := short.judge(10); v.grew || !v.short || v.slope <= v.bound {
		t.Errorf("a 20-minute leak: grew %v, short %v, slope %v bound %v; want printed above its bound, not judged", v.grew, v.short, v.slope, v.bound)
	}
	var out bytes.Buffer
	grew := printSoak(&out, []soakVerdict{series(32, 100, 500, 650, 800).judge(10), series(32, 1, 2, 2, 2).judge(10)}, 10)
	if len(grew) != 1 || grew[0] != "actor rss" || !strings.Contains(out.String(), "GREW") || !strings.Contains(out.String(), "+300.0 MiB") {
		t.Errorf("grew %v, table:\n%s", grew, out.String())
	}
}

func TestParseMetrics(t *testing.T) {
	in := "# HELP go_goroutines Number of goroutines that currently exist.\n# TYPE go_goroutines gauge\ngo_goroutines 42\ngo_threads 9\n" +
		"asyncwebrl_learner_replay_bytes 1.5e+08\nasyncwebrl_learner_replay_samples 900\nasyncwebrl_learner_replay_capacity 4096\n" +
		"go_gc_heap_live_bytes 2.5e+08\ngo_memstats_sys_bytes 6e+08\ngo_memstats_heap_released_bytes 1e+07\ngo_memstats_heap_alloc_bytes 4e+08\n" +
		"asyncwebrl_c_heap_in_use_bytes 9e+07\nasyncwebrl_c_heap_free_bytes 3e+06\n"
	m, err := parseMetrics(strings.NewReader(in))
	if err != nil || m[goroutinesMetric] != 42 || m[replayBytesMetric] != 1.5e8 || m[replaySamplesMetric] != 900 || m[replayCapacityMetric] != 4096 {
		t.Errorf("%v, %v; want 42 goroutines and the replay's 1.5e8 bytes, 900 of 4096 samples", m, err)
	}
	if m[heapLiveMetric] != 2.5e8 || m[goSysMetric] != 6e8 || m[heapReleasedMetric] != 1e7 || m[cHeapInUseMetric] != 9e7 || m[cHeapFreeMetric] != 3e6 || len(m) != 9 {
		t.Errorf("%v: want the live heap, the runtime's memory, the released heap and the C heap, and nothing else", m)
	}
	if m, _ := parseMetrics(strings.NewReader("go_goroutines 3\n")); len(m) != 1 {
		t.Errorf("a target without a replay: %v", m)
	}
	if _, err := parseMetrics(strings.NewReader("go_threads 9\n")); err == nil {
		t.Error("no go_goroutines: no error")
	}
	if _, err := parseMetrics(strings.NewReader("go_goroutines many\n")); err == nil {
		t.Error("a bad value: no error")
	}
}

// A series with a note (the learner's rss, which holds its bounded replay)
// is printed with it and never counted as grown.
func TestSoakNoteNotJudged(t *testing.T) {
	s := &soakSeries{component: "learner", metric: "rss", unit: "MiB", floor: 32, note: "not judged: holds the replay (700 MiB at the end)"}
	for i, v := range []float64{100, 400, 700, 1000} {
		s.at, s.v = append(s.at, float64(i)*0.5), append(s.v, v)
	}
	var out bytes.Buffer
	grew := printSoak(&out, []soakVerdict{s.judge(10)}, 10)
	if len(grew) != 0 || !strings.Contains(out.String(), "not judged: holds the replay") {
		t.Errorf("grew %v, table:\n%s", grew, out.String())
	}
}

// The flags: a soak too short for three samples after its warm-up is a
// usage error, before anything starts.
func TestSoakFlags(t *testing.T) {
	var out bytes.Buffer
	for _, args := range [][]string{{"--duration", "5m"}, {"--every", "0"}, {"--max-growth", "-1"}, {"--duration", "soon"}} {
		if err := runSoak(t.Context(), args, &out, &out); err == nil || !strings.Contains(err.Error(), "invalid") && !strings.Contains(err.Error(), "fewer than 3") {
			t.Errorf("%v: %v", args, err)
		}
	}
}
