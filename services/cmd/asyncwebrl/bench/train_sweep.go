package bench

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/reporter/chart"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// trainCell is one cell of bench train's sweep: a latency profile and an
// executor count.
type trainCell struct {
	latency   string
	executors int
}

// sweep lists the cells, profiles outermost (a profile's cells share its
// server delays' shape, so its executor counts are compared side by side);
// an axis not swept is the configuration's one value.
func (bt trainFlags) sweep(cfg *config.Config) ([]trainCell, error) {
	lats, execs := bt.latencies, bt.executors
	if len(lats) == 0 {
		lats = []string{cfg.Webenv.LatencyProfile}
	}
	if len(execs) == 0 {
		execs = []int{cfg.Actor.Executors}
	}
	var cells []trainCell
	for _, l := range lats {
		if _, err := webenv.ParseProfile(l); err != nil {
			return nil, fmt.Errorf("invalid latency profile: %w", err)
		}
		for _, n := range execs {
			cells = append(cells, trainCell{latency: l, executors: n})
		}
	}
	return cells, nil
}

// cellRatio is sync/async's median wall time to the target over one cell's
// runs with its 95% interval; ok is false where it is not measured (a mode
// missing, or async's median only a lower bound), atLeast where sync's is.
type cellRatio struct {
	ratio, lo, hi float64
	n             int
	ok, atLeast   bool
	// reached: runs that reached the target, of runs, per mode.
	asyncReached, syncReached, runs int
}

func ratioOf(runs []trainRun) cellRatio {
	by := byMode(runs, []string{"async", "sync"})
	a, s := by["async"], by["sync"]
	if a == nil || s == nil {
		return cellRatio{}
	}
	r := cellRatio{n: min(len(a.times), len(s.times)), asyncReached: a.reached(), syncReached: s.reached(), runs: len(a.times)}
	r.ratio, r.lo, r.hi = bootstrapRatio(s.times, a.times, bootstrapResamples, bootstrapSeed)
	r.ok, r.atLeast = !a.lowerBound(a.times), s.lowerBound(s.times)
	return r
}

func (c trainCell) runs(all []trainRun) []trainRun {
	var out []trainRun
	for _, r := range all {
		if r.cell == c {
			out = append(out, r)
		}
	}
	return out
}

// printSweep prints sync/async per cell: how many times sooner async
// reached the target, with its interval.
func printSweep(stdout io.Writer, runs []trainRun, cells []trainCell, bt trainFlags) {
	fmt.Fprintf(stdout, "the sweep: sync/async, sync's median wall time to %.0f%% over async's, with its 95%% bootstrap interval (\"-\": async's median is only a lower bound; ≥: sync's is)\n", 100*bt.target)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "latency\texecutors\tasync reached\tsync reached\tsync/async\t95%% interval\t\n")
	for _, c := range cells {
		r := ratioOf(c.runs(runs))
		cell, iv := "-", "-"
		if r.ok {
			cell = atLeast(r.atLeast) + fmt.Sprintf("%.2fx", r.ratio)
			iv = interval(r.n, fmt.Sprintf("%.2fx", r.lo), fmt.Sprintf("%.2fx", r.hi))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d of %d\t%d of %d\t%s\t%s\t\n", c.latency, c.executors, r.asyncReached, r.runs, r.syncReached, r.runs, cell, iv)
	}
	_ = tw.Flush()
}

// sweepChart draws sync/async per cell against the profile's median server
// delay, one line per executor count, with a parity line at 1.
func sweepChart(runs []trainRun, cells []trainCell) chart.Chart {
	c := chart.Chart{
		Title:  "bench train: how many times sooner async reaches the target",
		XLabel: "latency profile's median server delay (s)",
		YLabel: "sync/async, median time to target",
		HLines: []chart.HLine{{Y: 1, Label: "parity"}},
	}
	lines := map[int]*chart.Series{}
	var order []int
	for _, cell := range cells {
		s, ok := lines[cell.executors]
		if !ok {
			s = &chart.Series{Name: strconv.Itoa(cell.executors) + " executors"}
			lines[cell.executors] = s
			order = append(order, cell.executors)
		}
		p, _ := webenv.ParseProfile(cell.latency)
		y := math.NaN()
		if r := ratioOf(cell.runs(runs)); r.ok {
			y = r.ratio
		}
		s.X = append(s.X, p.Server.Median().Seconds())
		s.Y = append(s.Y, y)
	}
	for _, n := range order {
		c.Series = append(c.Series, *lines[n])
	}
	return c
}
