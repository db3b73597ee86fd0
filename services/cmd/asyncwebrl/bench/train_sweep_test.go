package bench

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
)

// TestTrainSweep: the cells are profile x executor count, each cell's
// ratio comes from its own runs only, and a cell async never finished
// prints no ratio and breaks the chart's line.
func TestTrainSweep(t *testing.T) {
	cfg := &config.Config{}
	cfg.Webenv.LatencyProfile, cfg.Actor.Executors = "none", 4
	cells, err := trainFlags{}.sweep(cfg)
	if err != nil || len(cells) != 1 || cells[0] != (trainCell{latency: "none", executors: 4}) {
		t.Fatalf("no sweep: %v, %v", cells, err)
	}
	bt := trainFlags{modes: []string{"async", "sync"}, target: 0.8, latencies: []string{"web", "heavy"}, executors: []int{8, 24}}
	if cells, err = bt.sweep(cfg); err != nil || len(cells) != 4 || cells[1] != (trainCell{latency: "web", executors: 24}) || cells[2] != (trainCell{latency: "heavy", executors: 8}) {
		t.Fatalf("cells %v, %v", cells, err)
	}
	run := func(c trainCell, mode string, min int, reached bool) trainRun {
		return trainRun{cell: c, mode: mode, toTarget: time.Duration(min) * time.Minute, reached: reached}
	}
	var runs []trainRun
	for _, m := range [][2]int{{2, 6}, {3, 9}, {4, 12}} { // web, 8: sync 3x async in each seed
		runs = append(runs, run(cells[0], "async", m[0], true), run(cells[0], "sync", m[1], true))
	}
	runs = append(runs, run(cells[1], "async", 5, true), run(cells[1], "sync", 5, true)) // web, 24: parity
	runs = append(runs, run(cells[2], "async", 20, false), run(cells[2], "sync", 20, false))
	runs = append(runs, run(cells[3], "async", 2, true), run(cells[3], "sync", 12, false)) // heavy, 24: sync at its cap
	if r := ratioOf(cells[0].runs(runs)); !r.ok || r.ratio != 3 || r.lo != 1.5 || r.hi != 6 || r.asyncReached != 3 {
		// The modes resample independently: 6/4 and 12/2 are the ends.
		t.Errorf("web, 8: %+v, want 3x in [1.5x, 6x]", r)
	}
	if r := ratioOf(cells[1].runs(runs)); !r.ok || r.ratio != 1 {
		t.Errorf("web, 24: %+v, want 1x", r)
	}
	if r := ratioOf(cells[2].runs(runs)); r.ok {
		t.Errorf("heavy, 8: %+v, want no ratio (async capped)", r)
	}
	var out strings.Builder
	printSweep(&out, runs, cells, func(trainCell) float64 { return bt.target })
	for _, want := range []string{"web          8        3 of 3", "3.00x", "[1.50x, 6.00x]", "heavy          8        0 of 1"} {
		if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
	c := sweepChart(runs, cells)
	if len(c.Series) != 3 || c.Series[0].Name != "8 executors" || c.Series[0].Y[0] != 3 || !math.IsNaN(c.Series[0].Y[1]) || c.Series[1].Y[0] != 1 || c.Series[1].Y[1] != 6 {
		t.Errorf("chart series %+v", c.Series)
	}
	// Each cell's interval is its band; a cell with no ratio has none.
	if s := c.Series[0]; s.Lo[0] != 1.5 || s.Hi[0] != 6 || !math.IsNaN(s.Lo[1]) || !s.Marks {
		t.Errorf("8 executors: band %v to %v, marks %v; want [1.5, 6] then none, marked", s.Lo, s.Hi, s.Marks)
	}
	// The lower bound is marked on a series of its own, a lone point.
	if b := c.Series[2]; !strings.HasPrefix(b.Name, "≥") || len(b.X) != 2 || b.X[0] != 0.8 || b.Y[0] != 6 || !math.IsNaN(b.Y[1]) {
		t.Errorf("the lower bounds' series %+v: want the heavy, 24 cell alone at 6x", b)
	}
	if c.Series[0].X[0] != 0.12 || c.Series[0].X[1] != 0.8 {
		t.Errorf("x: the profiles' median delays, got %v", c.Series[0].X)
	}
	path := filepath.Join(t.TempDir(), "sweep.png")
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Errorf("the chart: %v", err)
	}
}
