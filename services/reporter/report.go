package reporter

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/reporter/chart"
)

// Target is the held-out success the easy tier is trained to.
const Target = 0.8

// TaskTarget is the held-out success a task is judged to have learnt (the
// MiniWoB++ issue's 90%), over TaskWindow consecutive greedy episodes of the
// task: a task gets about 1/70 of a suite's held-out episodes, so the
// tier's window of 40 would take most of a run to fill.
const (
	TaskTarget = 0.9
	TaskWindow = 10
)

// WriteReport writes report.md and curve.png into dir and returns their
// paths.
func WriteReport(dir string, s *Stats, end time.Time, window int, settings map[string]string) ([2]string, error) {
	var paths [2]string
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return paths, fmt.Errorf("unable to create the run directory: %w", err)
	}
	paths[0], paths[1] = filepath.Join(dir, "report.md"), filepath.Join(dir, "curve.png")
	step := 30 * time.Second
	c := chart.Chart{
		Title:  "success by tier (last " + fmt.Sprint(window) + " episodes of each)",
		XLabel: "minutes", YLabel: "success",
		YMin: 0, YMax: 1,
		HLines: []chart.HLine{{Y: Target, Label: "target 0.8"}},
	}
	tiers := []eventspb.Tier{eventspb.Tier_TIER_EASY, eventspb.Tier_TIER_MEDIUM, eventspb.Tier_TIER_HARD}
	for _, tier := range tiers {
		for _, heldOut := range []bool{true, false} {
			pts := s.Curve(tier, heldOut, window, step, end)
			if !slices.ContainsFunc(pts, func(p Point) bool { return !math.IsNaN(p.Value) }) {
				continue
			}
			name := tierName(tier) + " held-out"
			if !heldOut {
				name = tierName(tier) + " train"
			}
			sr := chart.Series{Name: name}
			for _, p := range pts {
				sr.X, sr.Y = append(sr.X, p.Minutes), append(sr.Y, p.Value)
			}
			c.Series = append(c.Series, sr)
		}
	}
	curveNote := "curve.png"
	if len(c.Series) > 0 {
		if err := c.WriteFile(paths[1]); err != nil {
			return paths, err
		}
	} else {
		curveNote = "no curve: too few episodes"
	}

	var b strings.Builder
	dur := end.Sub(s.start)
	fmt.Fprintf(&b, "# Run report %s\n\n", s.start.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Duration %s; %d episodes (%.2f/s), %d demonstrations, %d aborted; newest policy version %d.\n\n",
		dur.Round(time.Second), s.Episodes(), float64(s.Episodes())/max(dur.Seconds(), 1), s.demos, s.aborted, s.newest)
	b.WriteString("## Success by tier\n\n")
	b.WriteString("Greedy episodes on held-out sites (never trained on) and sampled training episodes; the last ")
	fmt.Fprintf(&b, "%d of each at the end, and the random-init policy (every episode acted by version 0).\n\n", window)
	b.WriteString("| tier | held-out (end) | train (end) | random-init held-out | random-init train | time to 80% held-out |\n|---|---|---|---|---|---|\n")
	for _, tier := range tiers {
		test, train := s.Recent(tier, true, window, end), s.Recent(tier, false, window, end)
		rnd, rndTrain := s.RandomBaseline(tier, true), s.RandomBaseline(tier, false)
		if test.N+train.N+rnd.N+rndTrain.N == 0 {
			continue
		}
		tt := "not reached"
		if d, ok := s.TimeTo(tier, Target, window); ok {
			tt = d.Round(time.Second).String()
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", tierName(tier), pct(test), pct(train), pct(rnd), pct(rndTrain), tt)
	}
	writeTaskTable(&b, s, window, end)
	b.WriteString("\n## Learning curve\n\n")
	if len(c.Series) > 0 {
		b.WriteString("![learning curve](curve.png)\n\n")
	} else {
		b.WriteString(curveNote + "\n\n")
	}
	b.WriteString("| minute | " + strings.Join(seriesNames(c), " | ") + " |\n|---|" + strings.Repeat("---|", len(c.Series)) + "\n")
	if len(c.Series) > 0 {
		for i := range c.Series[0].X {
			if i%2 == 1 && i != len(c.Series[0].X)-1 {
				continue // every minute
			}
			fmt.Fprintf(&b, "| %.1f |", c.Series[0].X[i])
			for _, sr := range c.Series {
				fmt.Fprintf(&b, " %s |", fmtRate(sr.Y[i]))
			}
			b.WriteString("\n")
		}
	}
	if c := s.LM(); c.Actions > 0 {
		fmt.Fprintf(&b, "\n## Language model\n\n%d actions chosen by a language model: %s.\n", c.Actions, c.Line(dur))
	}
	b.WriteString("\n## Weight propagation\n\n")
	if p50, p99, n := s.Propagation(); n > 0 {
		fmt.Fprintf(&b, "From publication on the weights topic until every actor acted with the version (or a newer one), over %d versions: p50 %s, p99 %s.\n", n, p50.Round(time.Millisecond), p99.Round(time.Millisecond))
	} else {
		b.WriteString("No version was published and served during the run.\n")
	}
	if len(settings) > 0 {
		b.WriteString("\n## Settings\n\n")
		keys := make([]string, 0, len(settings))
		for k := range settings {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "- %s: %s\n", k, settings[k])
		}
	}
	if err := os.WriteFile(paths[0], []byte(b.String()), 0o644); err != nil {
		return paths, fmt.Errorf("unable to write the report: %w", err)
	}
	return paths, nil
}

func seriesNames(c chart.Chart) []string {
	// out: where progress lines go (default stdout).
	out := make([]string, len(c.Series))
	for i, s := range c.Series {
		out[i] = s.Name
	}
	return out
}

// writeTaskTable writes the held-out success of every task: the tier table
// averages over a tier's tasks, and a suite like MiniWoB++ (about 90 easy
// tasks) is judged task by task. Tasks the action space cannot express are
// never in it (Stats.AddEpisode).
func writeTaskTable(b *strings.Builder, s *Stats, window int, end time.Time) {
	rows := s.ByTask(window, end)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n## Held-out success by task\n\n")
	fmt.Fprintf(b, "Greedy episodes on each task's held-out site or test seeds (never trained on), the last %d of each at the end (successes/episodes), beside sampled training episodes and the random-init policy's held-out episodes; and when the task's held-out success over %d consecutive greedy episodes first reached %.0f%%.\n\n", window, TaskWindow, 100*TaskTarget)
	fmt.Fprintf(b, "| task | tier | held-out (end) | train (end) | random-init held-out | time to %.0f%% held-out |\n|---|---|---|---|---|---|\n", 100*TaskTarget)
	for _, r := range rows {
		tt := "not reached"
		if d, ok := s.TaskTimeTo(r.Family, TaskTarget, TaskWindow); ok {
			tt = d.Round(time.Second).String()
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", r.Family, tierName(r.Tier), frac(r.HeldOut), frac(r.Train), frac(r.RandomHeldOut), tt)
	}
	writeMiniWoBScores(b, rows)
}

// writeMiniWoBScores writes the MiniWoB++ tasks' held-out figures as the
// field reports them: the score (mean raw reward, in [−1, 1]) and strict
// success (raw reward 1) beside success as raw reward > 0 (the table
// above), with the published human and CC-Net scores.
func writeMiniWoBScores(b *strings.Builder, rows []TaskRate) {
	pub := catalog.MiniWoBPublishedScores()
	var mw []TaskRate
	for _, r := range rows {
		if catalog.IsMiniWoB(r.Family) {
			mw = append(mw, r)
		}
	}
	if len(mw) == 0 {
		return
	}
	b.WriteString("\n## MiniWoB++ scores, as the published tables count them\n\n")
	b.WriteString("Held-out greedy episodes as above. Score: the mean raw reward (in [−1, 1]); strict: raw reward 1; raw > 0 counts a partly right answer (find-greatest's 0.1) as a success. Published columns are not measured here; \"-\": not reported.\n\n")
	b.WriteString("Set: *dev* for the development set (tasks whose episodes or pages designed a feature; `catalog.MiniWoBDevelopment`), *other* for the rest.\n\n")
	b.WriteString("| task | set | score | strict | raw > 0 | random-init score | human (published) | CC-Net (published) |\n|---|---|---|---|---|---|---|---|\n")
	var all, dev, other scoreSum
	for _, r := range mw {
		cells := []string{"-", "-", "-", "-"}
		_, isDev := catalog.MiniWoBDevelopment(r.Family)
		set := map[bool]string{true: "dev", false: "other"}[isDev]
		if h := r.HeldOut; h.N > 0 {
			cells[0] = fmt.Sprintf("%.2f", h.Score())
			cells[1] = fmt.Sprintf("%d/%d", h.Strict, h.N)
			cells[2] = fmt.Sprintf("%d/%d", h.Success, h.N)
			human, ok := pub.Score(r.Family, catalog.PublishedHuman)
			beats := ok && h.Score() > human
			all.add(h.Score(), beats)
			if isDev {
				dev.add(h.Score(), beats)
			} else {
				other.add(h.Score(), beats)
			}
		}
		if h := r.RandomHeldOut; h.N > 0 {
			cells[3] = fmt.Sprintf("%.2f", h.Score())
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Family, set, cells[0], cells[1], cells[2], cells[3],
			pub.Cell(r.Family, catalog.PublishedHuman), pub.Cell(r.Family, catalog.PublishedCCNet))
	}
	if all.n > 0 {
		fmt.Fprintf(b, "\nMean score over the %d tasks with held-out episodes: %.2f (%d above the published human score).\n", all.n, all.mean(), all.beatHuman)
		fmt.Fprintf(b, "Development set: %s. Other tasks: %s.\n", dev, other)
	}
	fmt.Fprintf(b, "\nPublished: %s\n", pub.Source)
}

// frac prints a rate as successes/episodes and a percentage, or "-".
func frac(r Rate) string {
	if r.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", r.Success, r.N, 100*r.Value())
}

// scoreSum is a mean score over tasks, and how many beat the published
// human score.
type scoreSum struct {
	sum          float64
	n, beatHuman int
}

func (s *scoreSum) add(score float64, beatsHuman bool) {
	s.sum += score
	s.n++
	if beatsHuman {
		s.beatHuman++
	}
}

func (s scoreSum) mean() float64 { return s.sum / float64(max(s.n, 1)) }

func (s scoreSum) String() string {
	if s.n == 0 {
		return "no task with held-out episodes"
	}
	tasks := "tasks"
	if s.n == 1 {
		tasks = "task"
	}
	return fmt.Sprintf("mean score %.2f over %d %s (%d above the human score)", s.mean(), s.n, tasks, s.beatHuman)
}
