package bench

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/reporter/chart"
)

// Checkpoint curves: each mode's evaluated checkpoints across its seeds, as
// the papers draw learning curves, against wall time and against env
// steps. The line is the median over the seeds that have a point there and
// the band their lowest to highest, so one lucky seed shows as a band, not
// as the mode's curve.

// curve is one group's (a mode, in a sweep a mode and cell) checkpoint
// success at common x values: the median over the runs with a value at x,
// the lowest and highest, and how many runs that was.
type curve struct {
	name           string
	x, med, lo, hi []float64
	runs           []int
}

// curveGroup names the group a run's curve belongs to: its mode, with its
// cell when the runs span several, and its task set when they span several
// of those (runs merged by --from).
func curveGroup(r trainRun, cells, sets bool) string {
	name := r.mode
	if cells {
		name = fmt.Sprintf("%s, %s, %d executors", r.mode, r.cell.latency, r.cell.executors)
	}
	if sets {
		name += ", " + taskSetName(r.cell.tasks)
	}
	return name
}

// groupRuns splits runs into their curve groups, in first-seen order.
func groupRuns(runs []trainRun) (names []string, by map[string][]trainRun) {
	cells, sets := map[trainCell]bool{}, map[string]bool{}
	for _, r := range runs {
		cells[r.cell], sets[r.cell.tasks] = true, true
	}
	by = map[string][]trainRun{}
	for _, r := range runs {
		g := curveGroup(r, len(cells) > 1, len(sets) > 1)
		if _, ok := by[g]; !ok {
			names = append(names, g)
		}
		by[g] = append(by[g], r)
	}
	return names, by
}

// spread adds x's median, lowest and highest of vs to c (NaN without any).
func (c *curve) spread(x float64, vs []float64) {
	c.x, c.runs = append(c.x, x), append(c.runs, len(vs))
	if len(vs) == 0 {
		c.med, c.lo, c.hi = append(c.med, math.NaN()), append(c.lo, math.NaN()), append(c.hi, math.NaN())
		return
	}
	c.med, c.lo, c.hi = append(c.med, median(vs)), append(c.lo, slices.Min(vs)), append(c.hi, slices.Max(vs))
}

// curvesByTime are the groups' curves at the checkpoint times (minutes),
// which every run of a bench shares.
func curvesByTime(runs []trainRun) []curve {
	names, by := groupRuns(runs)
	var out []curve
	for _, name := range names {
		at := map[time.Duration][]float64{}
		for _, r := range by[name] {
			for _, cp := range r.checkpoints {
				if cp.success >= 0 {
					at[cp.at] = append(at[cp.at], cp.success)
				}
			}
		}
		if len(at) == 0 {
			continue
		}
		c := curve{name: name}
		for _, t := range slices.Sorted(maps.Keys(at)) {
			c.spread(t.Minutes(), at[t])
		}
		out = append(out, c)
	}
	return out
}

// curvesBySteps are the groups' curves against env steps: each run's
// checkpoints (steps, success) joined by straight lines and read at points
// evenly spaced from the group's fewest to its most steps; a run counts at
// x only between its first and last evaluated checkpoint.
func curvesBySteps(runs []trainRun, points int) []curve {
	names, by := groupRuns(runs)
	var out []curve
	for _, name := range names {
		var lines [][]checkpoint
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range by[name] {
			var l []checkpoint
			for _, cp := range r.checkpoints {
				if cp.success >= 0 {
					l = append(l, cp)
				}
			}
			if len(l) == 0 {
				continue
			}
			slices.SortStableFunc(l, func(a, b checkpoint) int { return cmp.Compare(a.steps, b.steps) })
			lines = append(lines, l)
			lo, hi = math.Min(lo, float64(l[0].steps)), math.Max(hi, float64(l[len(l)-1].steps))
		}
		if len(lines) == 0 {
			continue
		}
		c := curve{name: name}
		for k := range points {
			x := lo
			if points > 1 {
				x = lo + (hi-lo)*float64(k)/float64(points-1)
			}
			var vs []float64
			for _, l := range lines {
				if v, ok := interpolate(l, x); ok {
					vs = append(vs, v)
				}
			}
			c.spread(x, vs)
		}
		out = append(out, c)
	}
	return out
}

// interpolate reads a run's checkpoint line (sorted by steps) at x steps.
func interpolate(l []checkpoint, x float64) (float64, bool) {
	if len(l) == 0 || x < float64(l[0].steps) || x > float64(l[len(l)-1].steps) {
		return 0, false
	}
	for i := 1; i < len(l); i++ {
		x0, x1 := float64(l[i-1].steps), float64(l[i].steps)
		if x <= x1 {
			if x1 == x0 {
				return l[i].success, true
			}
			return l[i-1].success + (l[i].success-l[i-1].success)*(x-x0)/(x1-x0), true
		}
	}
	return l[0].success, true // one checkpoint, at x
}

// curveChart draws curves (median line, lowest-to-highest band).
func curveChart(title, xLabel string, curves []curve, target float64) chart.Chart {
	c := chart.Chart{Title: title, XLabel: xLabel, YLabel: "held-out success at the checkpoint", YMin: 0, YMax: 1,
		HLines: []chart.HLine{{Y: target, Label: "target"}}}
	for _, cv := range curves {
		most := slices.Max(cv.runs)
		name := fmt.Sprintf("%s: median of %d seeds, band lowest-highest", cv.name, most)
		if most == 1 {
			name = cv.name + ": one seed"
		}
		c.Series = append(c.Series, chart.Series{Name: name,
			X: cv.x, Y: cv.med, Lo: cv.lo, Hi: cv.hi})
	}
	return c
}

// writeCheckpointCurves writes the curves against wall time to path and
// against env steps beside it (name-steps.png), and returns both paths;
// nothing when no checkpoint was evaluated.
func writeCheckpointCurves(path string, runs []trainRun, target float64) ([]string, error) {
	byTime := curvesByTime(runs)
	if len(byTime) == 0 {
		return nil, nil
	}
	stepsPath := stepsPathFor(path)
	if err := curveChart("held-out success of the checkpoints against wall time", "minutes", byTime, target).WriteFile(path); err != nil {
		return nil, err
	}
	if err := curveChart("held-out success of the checkpoints against env steps", "env steps", curvesBySteps(runs, 25), target).WriteFile(stepsPath); err != nil {
		return nil, err
	}
	return []string{path, stepsPath}, nil
}

// stepsPathFor is "x-steps.png" for "x.png".
func stepsPathFor(path string) string {
	return strings.TrimSuffix(path, ".png") + "-steps.png"
}
