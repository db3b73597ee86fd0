package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/reporter/chart"
)

const benchReportUsage = `Usage: asyncwebrl bench report [--sections rollout,pipeline,train,joiner,recorder] [flags]
  Runs the benchmarks with short settings, one after the other, and writes
  one document with their plots: <run-dir>/bench/<time>/report.md.
    rollout   bench rollout --profile none --executors 4,8,16 --modes async,sync,raw
              --duration 20s --warmup 5s: steps/s and CPU by executor count and
              mode (plots), the efficiency, async/sync and async/raw
    pipeline  bench pipeline --duration 2m --warmup 45s: make run's job, each
              target a process, beside the rollout alone: its episodes/s and
              steps/s, and each component's share of the machine (actor with
              its browsers, learner, joiner, recorder, webenv, broker,
              ClickHouse, the rest)
    train     bench train --modes async,sync --seeds 1 --cap 10m --stop judge
              --tier easy: time to the easy tier's held-out target, async
              against sync, one run each (bench train alone defaults to 5
              seeds on its long-task set and gives intervals), with both
              learning curves against wall time (plot), the checkpoints'
              held-out success against wall time and env steps (plots) and
              the async run's weight propagation (publication until every
              actor served the version; plot)
    joiner    bench joiner --events 50000: joiner/consume-only and bytes per
              transition
    recorder  bench recorder --events 50000: recorder/bare ClickHouse insert
              (needs ClickHouse)
  A section that fails is reported with its error; the others still run.
  Each bench alone takes more flags (asyncwebrl bench <name> -help) and
  longer, steadier settings; this is the one-command overview.
  --sections S   the sections to run, comma-separated (default all five)
Flags: the binary's flags (-brokers, -executors for train, -run-dir, ...), given to
every section.
`

// reportSection is one of bench report's benches with the arguments it
// runs with.
type reportSection struct {
	name string
	args []string
}

// reportSections are bench report's sections, in order.
var reportSections = []reportSection{
	{"rollout", []string{"--profile", "none", "--executors", "4,8,16", "--modes", "async,sync,raw", "--duration", "20s", "--warmup", "5s"}},
	{"pipeline", []string{"--duration", "2m", "--warmup", "45s"}},
	// One seed: the overview's train section stays within two caps.
	// --tier easy: the easy tier's short tasks, not bench train's default
	// long-task set, whose sync runs alone can take the 10m cap.
	{"train", []string{"--modes", "async,sync", "--seeds", "1", "--cap", "10m", "--stop", "judge", "--tier", "easy"}},
	{"joiner", []string{"--events", "50000"}},
	{"recorder", []string{"--events", "50000"}},
}

func runBenchReport(ctx context.Context, args []string, stdout, stderr io.Writer, build Pipeline) error {
	if cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, benchReportUsage)
		return nil
	}
	vals, rest, err := cmdkit.SubFlags(args, []string{"sections"}, nil)
	if err != nil {
		return cmdkit.Usage(err)
	}
	want, err := parseSections(vals["sections"])
	if err != nil {
		return cmdkit.Usage(err)
	}
	cfg, err := cmdkit.Parse(rest, io.Discard)
	if err != nil {
		return err
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	dir := filepath.Join(cfg.RunDir, "bench", stamp)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("unable to create %s: %w", dir, err)
	}
	var doc strings.Builder
	fmt.Fprintf(&doc, "# Bench report %s\n\n%d cores (%s/%s), broker %s, %d executors for train. Short settings: each bench alone (`asyncwebrl bench <name> -help`) takes longer, steadier ones.\n\n",
		stamp, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, strings.Join(cfg.Brokers, ","), cfg.Actor.Executors)
	var rollouts []rolloutSummary // the pipeline section's baseline
	for _, sec := range reportSections {
		if !slices.Contains(want, sec.name) {
			continue
		}
		cmdArgs := append(slices.Clone(sec.args), rest...)
		fmt.Fprintf(stdout, "== bench report: %s (asyncwebrl bench %s %s)\n", sec.name, sec.name, strings.Join(cmdArgs, " "))
		var out bytes.Buffer
		w := io.MultiWriter(stdout, &out)
		fmt.Fprintf(&doc, "## %s\n\n`asyncwebrl bench %s %s`\n\n", sec.name, sec.name, strings.Join(cmdArgs, " "))
		var secErr error
		switch sec.name {
		case "rollout":
			var sums []rolloutSummary
			if sums, secErr = benchRollout(ctx, cmdArgs, w, stderr); len(sums) > 0 {
				rollouts = sums
				secErr = errors.Join(secErr, rolloutPlots(&doc, dir, sums))
			}
		case "pipeline":
			var ps *pipelineShare
			if ps, secErr = benchPipeline(ctx, cmdArgs, w, stderr); ps != nil {
				pipelineTable(&doc, ps, rollouts)
			}
		case "train":
			var runs []trainRun
			if runs, secErr = benchTrain(ctx, cmdArgs, w, stderr, build); len(runs) > 0 {
				secErr = errors.Join(secErr, trainPlots(&doc, dir, runs))
			}
		case "joiner":
			var js joinerSummary
			if js, secErr = benchJoiner(ctx, cmdArgs, w, stderr); secErr == nil {
				fmt.Fprintf(&doc, "| consume-only records/s | joiner (EOS) records/s | joiner/consume-only | ceiling (write floor/consume-only) | bytes per transition | output bytes per input byte |\n|---|---|---|---|---|---|\n| %.0f | %.0f | %.2f | %.2f | %.0f | %.3f |\n\n",
					js.consume, js.join, js.ratio, js.ceiling, js.bytesPerTransition, js.outputPerInput)
			}
		case "recorder":
			res, err := benchRecorder(ctx, cmdArgs, w, stderr)
			if secErr = err; res != nil {
				fmt.Fprintf(&doc, "| recorder rows/s | bare clickhouse-go rows/s | recorder/bare |\n|---|---|---|\n| %.0f | %.0f | %.2f |\n\n", res.RecorderRate, res.BareRate, res.Ratio)
			}
		}
		if secErr != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(&doc, "**The section failed:** %v\n\n", secErr)
			fmt.Fprintf(stderr, "bench report: section %s failed: %v\n", sec.name, secErr)
		}
		fmt.Fprintf(&doc, "<details><summary>output</summary>\n\n```\n%s```\n\n</details>\n\n", out.String())
	}
	path := filepath.Join(dir, "report.md")
	if err := os.WriteFile(path, []byte(doc.String()), 0o644); err != nil {
		return fmt.Errorf("unable to write the report: %w", err)
	}
	fmt.Fprintln(stdout, "bench report:", path)
	return nil
}

func parseSections(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return []string{"rollout", "pipeline", "train", "joiner", "recorder"}, nil
	}
	var out []string
	for _, s := range config.SplitList(v) {
		if !slices.ContainsFunc(reportSections, func(r reportSection) bool { return r.name == s }) {
			return nil, fmt.Errorf("invalid --sections %q: %q is not one of rollout, pipeline, train, joiner, recorder", v, s)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("invalid --sections %q: name at least one", v)
	}
	return out, nil
}

// rolloutPlots draws steps/s and CPU by executor count, one line per mode
// (medians over the runs), and adds them to the document.
func rolloutPlots(doc *strings.Builder, dir string, sums []rolloutSummary) error {
	var modes []actor.Mode
	for _, s := range sums {
		for m := range s.steps {
			if !slices.Contains(modes, m) {
				modes = append(modes, m)
			}
		}
	}
	slices.Sort(modes)
	steps := chart.Chart{Title: "rollout steps/s by executors (medians)", XLabel: "executors", YLabel: "steps/s"}
	cpu := chart.Chart{Title: "rollout CPU utilization by executors (medians)", XLabel: "executors", YLabel: "CPU share of all cores", YMin: 0, YMax: 1}
	for _, m := range modes {
		ss, cs := chart.Series{Name: string(m)}, chart.Series{Name: string(m)}
		for _, s := range sums {
			if len(s.steps[m]) == 0 {
				continue
			}
			x := float64(s.executors)
			ss.X, ss.Y = append(ss.X, x), append(ss.Y, median(s.steps[m]))
			cs.X, cs.Y = append(cs.X, x), append(cs.Y, median(s.cpu[m]))
		}
		steps.Series, cpu.Series = append(steps.Series, ss), append(cpu.Series, cs)
	}
	for _, p := range []struct {
		c    chart.Chart
		file string
	}{{steps, "rollout_steps.png"}, {cpu, "rollout_cpu.png"}} {
		if err := p.c.WriteFile(filepath.Join(dir, p.file)); err != nil {
			return err
		}
		fmt.Fprintf(doc, "![%s](%s)\n\n", p.c.Title, p.file)
	}
	if err := printRolloutSummary(doc, sums, modes); err != nil {
		return err
	}
	doc.WriteString("\n")
	return nil
}

// trainPlots draws each run's held-out learning curve against wall time,
// and the async runs' weight propagation as a distribution.
func trainPlots(doc *strings.Builder, dir string, runs []trainRun) error {
	curves := chart.Chart{Title: "held-out success against wall time", XLabel: "minutes", YLabel: "greedy held-out success (last 40)", YMin: 0, YMax: 1,
		HLines: []chart.HLine{{Y: 0.8, Label: "target"}}}
	prop := chart.Chart{Title: "weight propagation (async): publication until every actor served it", XLabel: "milliseconds", YLabel: "share of versions", YMin: 0, YMax: 1}
	for _, r := range runs {
		s := chart.Series{Name: fmt.Sprintf("%s seed %d", r.mode, r.seed)}
		for _, p := range r.curve {
			s.X, s.Y = append(s.X, p.Minutes), append(s.Y, p.Value)
		}
		curves.Series = append(curves.Series, s)
		if r.mode == "async" && len(r.propagation) > 0 {
			ps := chart.Series{Name: s.Name}
			for i, d := range r.propagation {
				ps.X, ps.Y = append(ps.X, float64(d.Microseconds())/1000), append(ps.Y, float64(i+1)/float64(len(r.propagation)))
			}
			prop.Series = append(prop.Series, ps)
		}
	}
	var buf strings.Builder
	bt := trainFlags{target: 0.8}
	for _, r := range runs {
		if !slices.Contains(bt.modes, r.mode) {
			bt.modes = append(bt.modes, r.mode)
		}
	}
	printTrainRuns(&buf, runs, bt)
	printTrainSummary(&buf, runs, bt)
	fmt.Fprintf(doc, "```\n%s```\n\n", buf.String())
	if err := curves.WriteFile(filepath.Join(dir, "train_curves.png")); err == nil {
		doc.WriteString("![held-out success against wall time](train_curves.png)\n\n")
	} else {
		fmt.Fprintf(doc, "No learning curve: %v\n\n", err)
	}
	paths, err := writeCheckpointCurves(filepath.Join(dir, "train_checkpoints.png"), runs, bt.target)
	if err != nil {
		return err
	}
	for _, p := range paths {
		fmt.Fprintf(doc, "![checkpoints' held-out success](%s)\n\n", filepath.Base(p))
	}
	if len(prop.Series) > 0 {
		if err := prop.WriteFile(filepath.Join(dir, "propagation.png")); err != nil {
			return err
		}
		doc.WriteString("![weight propagation](propagation.png)\n\n")
	}
	return nil
}

// pipelineTable adds the full pipeline's throughput beside the rollout
// alone (the rollout section's async run at the executor count nearest
// the pipeline's, when it ran) and each component's share of the machine.
func pipelineTable(doc *strings.Builder, ps *pipelineShare, rollouts []rolloutSummary) {
	executors := ps.executors
	fmt.Fprintf(doc, "| | episodes/s | env steps/s |\n|---|---|---|\n| full pipeline, %d executors | %.2f | %.1f |\n", executors, ps.episodesPerSecond, ps.stepsPerSecond)
	best := -1
	for i, s := range rollouts {
		if len(s.steps[actor.ModeAsync]) == 0 {
			continue
		}
		if best < 0 || abs(s.executors-executors) < abs(rollouts[best].executors-executors) {
			best = i
		}
	}
	if best >= 0 {
		r := rollouts[best]
		fmt.Fprintf(doc, "| rollout alone (async, %d executors, profile %s) | %.2f | %.1f |\n", r.executors, r.profile,
			median(r.eps[actor.ModeAsync]), median(r.steps[actor.ModeAsync]))
	}
	fmt.Fprintf(doc, "\n| component | cores | share of the machine's busy time |\n|---|---|---|\n")
	for _, sr := range ps.rows() {
		fmt.Fprintf(doc, "| %s | %.2f | %s |\n", sr.name, sr.cores, sr.share)
	}
	fmt.Fprintln(doc)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
