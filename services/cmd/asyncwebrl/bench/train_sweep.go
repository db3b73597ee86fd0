package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/reporter/chart"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// trainCell is one cell of bench train's sweep: a latency profile, an
// executor count and the task set trained (the curriculum's -families, ""
// for every family: one invocation trains one set; runs recorded from
// several are merged by --from).
type trainCell struct {
	latency   string
	executors int
	tasks     string
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
			cells = append(cells, trainCell{latency: l, executors: n, tasks: cfg.Learner.Families})
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
// reached the target (target: the cell's), with its interval; with cells
// of several task sets, each row names its set, its target and how long
// its episodes were.
func printSweep(stdout io.Writer, runs []trainRun, cells []trainCell, target func(trainCell) float64) {
	sets := taskSets(cells)
	if len(sets) > 1 {
		fmt.Fprintf(stdout, "the sweep: sync/async, sync's median wall time to the cell's target over async's, with its 95%% bootstrap interval (\"-\": async's median is only a lower bound; ≥: sync's is); steps an episode: the mean over the runs until their target\n")
	} else {
		fmt.Fprintf(stdout, "the sweep: sync/async, sync's median wall time to %.0f%% over async's, with its 95%% bootstrap interval (\"-\": async's median is only a lower bound; ≥: sync's is)\n", 100*target(cells[0]))
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	if len(sets) > 1 {
		fmt.Fprintf(tw, "tasks\ttarget\tsteps an episode\t")
	}
	fmt.Fprintf(tw, "latency\texecutors\tasync reached\tsync reached\tsync/async\t95%% interval\t\n")
	for _, c := range cells {
		r := ratioOf(c.runs(runs))
		cell, iv := "-", "-"
		if r.ok {
			cell = atLeast(r.atLeast) + fmt.Sprintf("%.2fx", r.ratio)
			iv = interval(r.n, fmt.Sprintf("%.2fx", r.lo), fmt.Sprintf("%.2fx", r.hi))
		}
		if len(sets) > 1 {
			fmt.Fprintf(tw, "%s\t%.0f%%\t%.1f\t", taskSetName(c.tasks), 100*target(c), stepsPerEpisode(c.runs(runs)))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d of %d\t%d of %d\t%s\t%s\t\n", c.latency, c.executors, r.asyncReached, r.runs, r.syncReached, r.runs, cell, iv)
	}
	_ = tw.Flush()
}

// taskSets are the cells' task sets, first seen first.
func taskSets(cells []trainCell) []string {
	var out []string
	for _, c := range cells {
		if !slices.Contains(out, c.tasks) {
			out = append(out, c.tasks)
		}
	}
	return out
}

// taskSetName is a task set as a table or a legend names it: its families
// without their suite's prefix.
func taskSetName(tasks string) string {
	if tasks == "" {
		return "every family"
	}
	var names []string
	for _, t := range config.SplitList(tasks) {
		names = append(names, t[strings.LastIndex(t, "/")+1:])
	}
	return strings.Join(names, ",")
}

// stepsPerEpisode is how long the runs' episodes were: their env steps
// over their episodes, until the target (or the cap); NaN without any.
func stepsPerEpisode(runs []trainRun) float64 {
	steps, episodes := 0, 0
	for _, r := range runs {
		steps, episodes = steps+r.steps, episodes+r.episodes
	}
	if episodes == 0 {
		return math.NaN()
	}
	return float64(steps) / float64(episodes)
}

// sweepChart draws sync/async per cell against the profile's median server
// delay, one line per executor count (and task set, with several, named by
// its episodes' mean length: the ratio against latency and task length),
// each cell a marked point with its 95% interval as a band, and a parity
// line at 1. A cell where sync's median is only a lower bound (sync hit the
// cap in half or more of its runs) is marked again on a series of its own,
// so the chart does not read a bound as a measurement.
func sweepChart(runs []trainRun, cells []trainCell) chart.Chart {
	c := chart.Chart{
		Title:      "bench train: how many times sooner async reaches the target",
		XLabel:     "latency profile's median server delay (s)",
		YLabel:     "sync/async, median time to target (95% interval)",
		HLines:     []chart.HLine{{Y: 1, Label: "parity"}},
		LegendLeft: true,
	}
	type line struct {
		executors int
		tasks     string
	}
	several := len(taskSets(cells)) > 1
	lines := map[line]*chart.Series{}
	var order []line
	bound := chart.Series{Name: "≥: sync at its cap, a lower bound", Marks: true}
	for _, cell := range cells {
		k := line{cell.executors, cell.tasks}
		s, ok := lines[k]
		if !ok {
			s = &chart.Series{Name: strconv.Itoa(cell.executors) + " executors", Marks: true}
			if several {
				var set []trainRun
				for _, o := range cells {
					if o.tasks == cell.tasks {
						set = append(set, o.runs(runs)...)
					}
				}
				s.Name += fmt.Sprintf(", %s (%.1f steps an episode)", taskSetName(cell.tasks), stepsPerEpisode(set))
			}
			lines[k] = s
			order = append(order, k)
		}
		p, _ := webenv.ParseProfile(cell.latency)
		x := p.Server.Median().Seconds()
		y, lo, hi := math.NaN(), math.NaN(), math.NaN()
		if r := ratioOf(cell.runs(runs)); r.ok {
			y, lo, hi = r.ratio, r.lo, r.hi
			if r.atLeast {
				// Each bound alone: the NaN after it keeps the series from
				// drawing a line to a bound of another line.
				bound.X, bound.Y = append(bound.X, x, x), append(bound.Y, y, math.NaN())
			}
		}
		s.X, s.Y = append(s.X, x), append(s.Y, y)
		s.Lo, s.Hi = append(s.Lo, lo), append(s.Hi, hi)
	}
	for _, k := range order {
		c.Series = append(c.Series, *lines[k])
	}
	if len(bound.X) > 0 {
		c.Series = append(c.Series, bound)
	}
	return c
}
