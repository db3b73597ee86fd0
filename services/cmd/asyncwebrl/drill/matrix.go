package drill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/asyncwebrl/asyncwebrl/loadtest"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
)

const drillMatrixUsage = `Usage: asyncwebrl drill matrix [--repeat N] [--runs a,b,...] [--dir DIR] [drill flags]
  Runs several drill schedules, each --repeat times (default 5), one after
  the other, and prints one verdict line per run, then a line per schedule.
  Each run is a whole drill (asyncwebrl drill --help) with its own cluster,
  topics and database; its full output goes to DIR/<schedule>-<i>.txt
  (DIR: a new temporary directory unless --dir; the runs' member logs are
  under it too and kept for failed runs). The schedules (--runs picks some,
  in this order):
    actors         real actors: broker@20s,joiner@50s,learner@80s,actor@110s,chromium@140s
    actors-short   real actors, the schedule of TestIntegrationDrillActors:
                   joiner@15s,actor@30s,chromium@45s, down 5s (on the drill's own cluster)
    synthetic      synthetic load, the schedule of TestIntegrationDrill:
                   broker@10s,broker-partition@20s,joiner@30s,joiner-latency@35s,
                   recorder@50s,clickhouse-latency@52s,learner@55s, down 5s,
                   network faults 8s
    every-fault    real actors, every fault: broker@20s,joiner@50s,recorder@80s,
                   learner@110s,actor@140s,chromium@170s,clickhouse@200s
                   (with a ClickHouse of the drill's own)
    network        real actors, every network fault for a minute each:
                   broker-partition@20s,actor-partition@60s,joiner-latency@100s,
                   clickhouse-latency@140s (needs network namespaces: root)
  Other flags go to every run (for example --executors, -topic-partitions).
  Exit 1 when any run fails. A run takes 3 to 6 minutes here.
`

// matrixRun is one schedule of the matrix: the drill's own flags.
type matrixRun struct {
	name string
	args []string
}

var drillMatrix = []matrixRun{
	{"actors", []string{"--synthetic=false", "--schedule", "broker@20s,joiner@50s,learner@80s,actor@110s,chromium@140s"}},
	{"actors-short", []string{"--synthetic=false", "--schedule", "joiner@15s,actor@30s,chromium@45s", "--down", "5s", "--tail", "10s"}},
	{"synthetic", []string{"--rate", "250", "--schedule", "broker@10s,broker-partition@20s,joiner@30s,joiner-latency@35s,recorder@50s,clickhouse-latency@52s,learner@55s",
		"--down", "5s", "--net-down", "8s", "--tail", "10s"}},
	{"every-fault", []string{"--synthetic=false", "--private-clickhouse",
		"--schedule", "broker@20s,joiner@50s,recorder@80s,learner@110s,actor@140s,chromium@170s,clickhouse@200s"}},
	{"network", []string{"--synthetic=false", "--schedule", "broker-partition@20s,actor-partition@60s,joiner-latency@100s,clickhouse-latency@140s", "--tail", "20s"}},
}

func runMatrix(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, drillMatrixUsage)
		return nil
	}
	vals, rest, err := cmdkit.SubFlags(args, []string{"repeat", "runs", "dir"}, nil)
	if err != nil {
		return cmdkit.Usage(err)
	}
	repeat := 5
	if v, ok := vals["repeat"]; ok {
		if repeat, err = strconv.Atoi(v); err != nil || repeat < 1 {
			return cmdkit.Usage(fmt.Errorf("invalid --repeat %q: want a positive integer", v))
		}
	}
	runs := drillMatrix
	if v, ok := vals["runs"]; ok {
		runs = nil
		for _, name := range strings.Split(v, ",") {
			i := matrixIndex(name)
			if i < 0 {
				return cmdkit.Usage(fmt.Errorf("invalid --runs item %q: want one of %s", name, strings.Join(names(drillMatrix), ", ")))
			}
			runs = append(runs, drillMatrix[i])
		}
	}
	for _, n := range []string{"schedule", "dir", "keep"} {
		if cmdkit.ArgGiven(rest, n) {
			return cmdkit.Usage(fmt.Errorf("flag --%s is the matrix's own per run", n))
		}
	}
	dir := vals["dir"]
	if dir == "" {
		if dir, err = os.MkdirTemp("", "asyncwebrl-drill-matrix-"); err != nil {
			return fmt.Errorf("unable to create the matrix's directory: %w", err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("unable to create the matrix's directory: %w", err)
	}
	fmt.Fprintf(stdout, "drill matrix: %s, %d runs each; outputs in %s\n", strings.Join(names(runs), ", "), repeat, dir)
	failed := 0
	type tally struct{ passed, runs int }
	tallies := map[string]*tally{}
	for _, r := range runs {
		tallies[r.name] = &tally{}
		for i := 1; i <= repeat; i++ {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			name := fmt.Sprintf("%s-%d", r.name, i)
			out, err := os.Create(filepath.Join(dir, name+".txt"))
			if err != nil {
				return fmt.Errorf("unable to create the run's output: %w", err)
			}
			t0 := time.Now()
			runArgs := append(append(append([]string{}, r.args...), "--dir", filepath.Join(dir, name)), rest...)
			res, derr := drill(ctx, runArgs, out, out)
			_ = out.Close()
			ok := derr == nil && res != nil && res.OK()
			tallies[r.name].runs++
			if ok {
				tallies[r.name].passed++
			} else {
				failed++
			}
			fmt.Fprintf(stdout, "%-16s %s\n", name, matrixLine(res, derr, time.Since(t0)))
		}
	}
	for _, r := range runs {
		t := tallies[r.name]
		fmt.Fprintf(stdout, "%-16s %d of %d passed\n", r.name, t.passed, t.runs)
	}
	if failed > 0 {
		return fmt.Errorf("%d drill runs failed (outputs in %s)", failed, dir)
	}
	return nil
}

// matrixLine is one run's verdict on a line: PASS or FAIL, then what was
// lost, duplicated and cut, the faults' recovery and the learner's chain.
func matrixLine(res *drillResult, err error, took time.Duration) string {
	var b strings.Builder
	switch {
	case err != nil && res == nil:
		return fmt.Sprintf("FAIL  did not run: %v  (%s)", err, took.Round(time.Second))
	case err == nil && res.OK():
		b.WriteString("PASS ")
	default:
		b.WriteString("FAIL ")
	}
	sum := func(vs []loadtest.Verdict) (lost, dup, cut int) {
		for _, v := range vs {
			lost += v.Lost + max(0, v.Expected-v.Found-v.Lost)
			dup += v.Duplicated
			cut += v.Cut
		}
		return
	}
	lost, dup, cut := sum(res.inputs)
	fmt.Fprintf(&b, " inputs lost %d dup %d", lost, dup)
	if res.traffic != nil {
		fmt.Fprintf(&b, " cut %d (of %d episodes; %d terminal)", cut, res.traffic.CutEpisodes, res.report.CutTerminal)
	}
	lost, dup, _ = sum(res.outputs)
	fmt.Fprintf(&b, "  outputs lost %d dup %d", lost, dup)
	lost, dup, _ = sum(res.tables)
	fmt.Fprintf(&b, "  ClickHouse lost %d dup %d", lost, dup)
	if res.versions != nil {
		fmt.Fprintf(&b, "  weights 1..%d", res.versions.Last)
		if !res.versions.OK() {
			b.WriteString(" BROKEN")
		}
	}
	recovered := 0
	for _, f := range res.faults {
		if f.ok() {
			recovered++
		}
	}
	fmt.Fprintf(&b, "  faults %d/%d recovered  learner self-exits %d  unclean %d  (%s)",
		recovered, len(res.faults), len(res.selfExits), len(res.unclean), took.Round(time.Second))
	if err != nil && !errors.Is(err, errDrillFailed) {
		fmt.Fprintf(&b, "  error: %v", err)
	}
	return b.String()
}

func matrixIndex(name string) int {
	for i, r := range drillMatrix {
		if r.name == name {
			return i
		}
	}
	return -1
}

func names(rs []matrixRun) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.name
	}
	return out
}
