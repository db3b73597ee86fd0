package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// modeRuns are one mode's runs as the summary takes them: the wall time
// (seconds) and env steps to the target, a capped run's at the cap.
type modeRuns struct {
	times, steps []float64
	capped       []bool
	// rates are the runs' env steps per second over their whole run.
	rates []float64
}

// reached is how many of the runs reached the target.
func (m *modeRuns) reached() int {
	n := 0
	for _, c := range m.capped {
		if !c {
			n++
		}
	}
	return n
}

// lowerBound reports whether the median of xs, the runs' values, is only a
// lower bound: a capped run's true value lies beyond the one recorded at
// the cap, and the median is exact only if no such later value could move
// it (every capped value above the middle). For the time, every capped run
// is above every one that reached the target, so this is when half or more
// hit the cap; the steps at the cap can lie anywhere.
func (m *modeRuns) lowerBound(xs []float64) bool {
	later := slices.Clone(xs)
	for i, c := range m.capped {
		if c {
			later[i] = math.Inf(1)
		}
	}
	return median(later) != median(xs)
}

// printTrainSummary prints per mode, over its runs, how many reached the
// target and the median wall time and env steps to it with their 95%
// bootstrap intervals; then sync/async, the ratio of the medians with its
// interval, and the sentence it comes to. A run that did not reach the
// target counts with its values at the cap, and a median they could have
// moved is marked as a lower bound (modeRuns.lowerBound).
func printTrainSummary(stdout io.Writer, runs []trainRun, bt trainFlags) {
	by := byMode(runs, bt.modes)
	if len(by) == 0 {
		return
	}
	fmt.Fprintf(stdout, "time to %.0f%%: medians over the seeds, 95%% bootstrap intervals (%d resamples); a run that did not reach the target counts at the cap, ≥: the median is then a lower bound\n",
		100*bt.target, bootstrapResamples)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "mode\treached\tmedian time\t95%% interval\tmedian steps\t95%% interval\t\n")
	for _, m := range bt.modes {
		mr, ok := by[m]
		if !ok {
			continue
		}
		t, tlo, thi := bootstrapMedian(mr.times, bootstrapResamples, bootstrapSeed)
		s, slo, shi := bootstrapMedian(mr.steps, bootstrapResamples, bootstrapSeed)
		n := len(mr.times)
		fmt.Fprintf(tw, "%s\t%d of %d\t%s%s\t%s\t%s%.0f\t%s\t\n", m, mr.reached(), n,
			atLeast(mr.lowerBound(mr.times)), fmtSeconds(t), interval(n, fmtSeconds(tlo), fmtSeconds(thi)),
			atLeast(mr.lowerBound(mr.steps)), s, interval(n, fmt.Sprintf("%.0f", slo), fmt.Sprintf("%.0f", shi)))
	}
	defer func() {
		var bc []string
		for _, m := range bt.modes {
			n := 0
			for _, r := range runs {
				if r.mode == m && r.beforeRL() {
					n++
				}
			}
			if n > 0 {
				bc = append(bc, fmt.Sprintf("%d %s", n, m))
			}
		}
		if len(bc) > 0 {
			fmt.Fprintf(stdout, "warning: runs at the target before their first policy-gradient update (%s, marked (BC)): the behaviour-cloning warm start took them there, so their times measure it, not RL; fewer -demos or -bc-updates, or a higher --target\n", strings.Join(bc, ", "))
		}
	}()
	a, s := by["async"], by["sync"]
	if a == nil || s == nil {
		_ = tw.Flush()
		return
	}
	n := min(len(a.times), len(s.times))
	rt, rtlo, rthi := bootstrapRatio(s.times, a.times, bootstrapResamples, bootstrapSeed)
	rs, rslo, rshi := bootstrapRatio(s.steps, a.steps, bootstrapResamples, bootstrapSeed)
	fmt.Fprintf(tw, "sync/async\t\t%s\t%s\t\n", ratioCells(rt, rtlo, rthi, n, a.lowerBound(a.times), s.lowerBound(s.times)),
		ratioCells(rs, rslo, rshi, n, a.lowerBound(a.steps), s.lowerBound(s.steps)))
	_ = tw.Flush()
	switch {
	case a.lowerBound(a.times):
		fmt.Fprintf(stdout, "sync/async: not measured (async did not reach the target within the cap in %d of %d runs)\n", len(a.times)-a.reached(), len(a.times))
	case s.lowerBound(s.times):
		fmt.Fprintf(stdout, "async reached the target at least %.2fx sooner than sync (sync/async median wall time to target; sync hit the cap in %d of %d runs)\n", rt, len(s.times)-s.reached(), len(s.times))
	case n < 2:
		fmt.Fprintf(stdout, "async reached the target %.2fx sooner than sync (sync/async median wall time to target; no interval with one run)\n", rt)
	default:
		fmt.Fprintf(stdout, "async reached the target %.2fx sooner than sync (sync/async median wall time to target, 95%% interval %.2fx to %.2fx)\n", rt, rtlo, rthi)
	}
	printThroughputCeiling(stdout, a, s, n)
}

// printThroughputCeiling prints async/sync in env steps per second, the
// most async's time to the target can gain on sync's unless async needs
// fewer env steps to it than sync's on-policy loop: the time ratio is the
// throughput ratio times the steps ratio (sync/async). Why print it: on a
// machine the rollout saturates, the throughput ratio is about sync's idle
// share, and a goal beyond it is out of the rollout's reach whatever the
// learner does; the steps ratio beside it says how much of the gap is
// learning.
func printThroughputCeiling(stdout io.Writer, a, s *modeRuns, n int) {
	if len(a.rates) == 0 || len(s.rates) == 0 || median(s.rates) <= 0 {
		return
	}
	r, lo, hi := bootstrapRatio(a.rates, s.rates, bootstrapResamples, bootstrapSeed)
	iv := ""
	if n >= 2 {
		iv = fmt.Sprintf(", 95%% interval %.2fx to %.2fx", lo, hi)
	}
	fmt.Fprintf(stdout, "throughput: async %.1f env steps/s, sync %.1f: async/sync %.2fx%s; async's time to the target gains on sync's by this times sync/async in env steps\n",
		median(a.rates), median(s.rates), r, iv)
}

// byMode gathers the runs of each of modes that has any.
func byMode(runs []trainRun, modes []string) map[string]*modeRuns {
	by := map[string]*modeRuns{}
	for _, m := range modes {
		mr := &modeRuns{}
		for _, r := range runs {
			if r.mode != m {
				continue
			}
			mr.times = append(mr.times, r.toTarget.Seconds())
			mr.steps = append(mr.steps, float64(r.steps))
			mr.capped = append(mr.capped, !r.reached)
			mr.rates = append(mr.rates, r.stepsPerSecond)
		}
		if len(mr.times) > 0 {
			by[m] = mr
		}
	}
	return by
}

// ratioCells are the ratio row's two cells for one measure: "-" when
// async's median is a lower bound (the ratio could then be anything below
// the computed one), ≥ when sync's is.
func ratioCells(r, lo, hi float64, n int, asyncBound, syncBound bool) string {
	if asyncBound {
		return "-\t"
	}
	return fmt.Sprintf("%s%.2fx\t%s", atLeast(syncBound), r, interval(n, fmt.Sprintf("%.2fx", lo), fmt.Sprintf("%.2fx", hi)))
}

// atLeast marks a median that is only a lower bound.
func atLeast(bound bool) string {
	if bound {
		return "≥ "
	}
	return ""
}

// interval prints a 95% interval over n runs, "-" for one: a single run has
// no spread to resample.
func interval(n int, lo, hi string) string {
	if n < 2 {
		return "-"
	}
	return "[" + lo + ", " + hi + "]"
}

// fmtSeconds prints seconds as a duration rounded to the second.
func fmtSeconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}
