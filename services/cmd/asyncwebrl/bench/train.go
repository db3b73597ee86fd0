package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/procstat"
	"github.com/asyncwebrl/asyncwebrl/services/reporter"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

const benchTrainUsage = `Usage: asyncwebrl bench train [--modes async,sync] [--repeat K] [--target F] [--window N] [--tier T] [--cap D] [flags]
  Time to skill, asynchronous against synchronous RL. Trains the policy
  from random init once per mode (and repeat), each on fresh topics, with
  the same seeds, executors, latency profile, learner settings and
  curriculum, the whole pipeline (webenv, actors, joiner, learner) in this
  process:
    async  as make run does: the actors never wait for the learner, and the
           learner never waits for a batch (-loop=async);
    sync   the classic on-policy loop over the same code (-loop=sync): a
           batch of episodes, one per executor, acted with version v; the
           actors wait until the learner has trained on that batch and
           published v+1; then the next batch.
  A run stops when the greedy held-out success of tier T over its last N
  episodes reaches F, or at the cap. Prints per run the wall time to the
  target, the episodes and env steps to it, steps/s, CPU utilization (cpu:
  this process and its Chromium processes over wall time and cores;
  machine: the whole machine's busy share, the broker included) and the
  versions published; then how many times sooner async reached the target
  (sync's wall time over async's). With --repeat K, each run and the medians.
  --modes M      modes to run, comma-separated (default async,sync)
  --repeat K     runs of each mode (default 1), interleaved
  --target F     held-out success to reach (default 0.8)
  --window N     greedy held-out episodes it is judged over (default 40)
  --tier T       the tier judged (default easy); the curriculum issues tiers up to
                 -max-tier, which defaults to T here
  --cap D        give up a run after D (default 20m)
Flags: -executors (default 8), -brokers (default: the configured broker; embedded for
an in-process one), -suite, -latency-profile, the learner's flags (-algo, -lr,
-batch-size, -replay-ratio, ...), -run-dir, the Kafka security flags.
`

// trainRun is one run of bench train.
type trainRun struct {
	mode              string
	reached           bool
	toTarget, wall    time.Duration
	episodes, steps   int // to the target (or the cap)
	allSteps          int
	cpu               float64
	machine           float64 // the whole machine's busy share; 0 where not measured
	versions          uint64
	finalRate         float64
	finalN            int
	repeat            int
	stepsPerSecond    float64
	episodesPerSecond float64
	// curve is the tier's held-out success over the run (bench report's
	// learning curves); propagation the versions' publication-to-served
	// delays.
	curve       []reporter.Point
	propagation []time.Duration
}

func runBenchTrain(ctx context.Context, args []string, stdout, stderr io.Writer, build Pipeline) error {
	_, err := benchTrain(ctx, args, stdout, stderr, build)
	return err
}

// benchTrain is bench train, returning its runs.
func benchTrain(ctx context.Context, args []string, stdout, stderr io.Writer, build Pipeline) ([]trainRun, error) {
	if cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, benchTrainUsage)
		return nil, nil
	}
	vals, rest, err := cmdkit.SubFlags(args, []string{"modes", "repeat", "target", "window", "tier", "cap"}, nil)
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	bt, err := parseTrainFlags(vals)
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	if !cmdkit.FlagGiven(rest, "max-tier") {
		rest = append([]string{"-max-tier=" + bt.tier.String()}, rest...)
	}
	cfg, err := cmdkit.Parse(rest, stdout)
	if err != nil {
		return nil, err
	}
	log := cmdkit.NewLogger(cfg, stderr)
	f, closeKafka, err := benchKafka(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer closeKafka()
	id := cmdkit.RandomID()
	fmt.Fprintf(stdout, "bench train: suite %s, tiers up to %s, target %s held-out ≥ %.0f%% over the last %d greedy episodes, cap %s, %d executors, %d cores, broker %s\n",
		cfg.Suite, cfg.Learner.MaxTier, bt.tier, 100*bt.target, bt.window, bt.cap, cfg.Actor.Executors, runtime.NumCPU(), strings.Join(cfg.Brokers, ","))
	if l := cfg.Learner; l.MaxStaleness > 0 || l.MaxPolicyLag > 0 {
		fmt.Fprintf(stdout, "async learner: max staleness %g versions (the scheduler's bound), max policy lag %d (0: off)\n", l.MaxStaleness, l.MaxPolicyLag)
	}
	var runs []trainRun
	for k := range bt.repeat {
		for _, mode := range bt.modes {
			fmt.Fprintf(stdout, "run %d of %d, %s: training from random init...\n", k+1, bt.repeat, mode)
			r, err := trainOnce(ctx, build, cfg, f, log, bt, mode, fmt.Sprintf("bench_train_%s_%s_%d.", id, mode, k+1), stdout)
			if err != nil {
				return nil, err
			}
			r.repeat = k + 1
			runs = append(runs, r)
			printTrainRuns(stdout, runs[len(runs)-1:], bt)
		}
	}
	fmt.Fprintln(stdout)
	printTrainRuns(stdout, runs, bt)
	printTrainSummary(stdout, runs, bt)
	return runs, nil
}

// trainFlags are bench train's own flags.
type trainFlags struct {
	modes          []string
	repeat, window int
	target         float64
	tier           catalog.Tier
	cap            time.Duration
}

func parseTrainFlags(vals map[string]string) (trainFlags, error) {
	bt := trainFlags{modes: []string{"async", "sync"}, repeat: 1, window: 40, target: 0.8, tier: catalog.Easy, cap: 20 * time.Minute}
	var err error
	if v, ok := vals["modes"]; ok {
		bt.modes = nil
		for _, m := range config.SplitList(v) {
			if m != "async" && m != "sync" {
				return bt, fmt.Errorf("invalid --modes %q: want async and/or sync", v)
			}
			if !slices.Contains(bt.modes, m) {
				bt.modes = append(bt.modes, m)
			}
		}
		if len(bt.modes) == 0 {
			return bt, fmt.Errorf("invalid --modes %q: name at least one mode", v)
		}
	}
	for name, dst := range map[string]*int{"repeat": &bt.repeat, "window": &bt.window} {
		if v, ok := vals[name]; ok {
			if *dst, err = strconv.Atoi(v); err != nil || *dst < 1 {
				return bt, fmt.Errorf("invalid --%s %q: want a positive integer", name, v)
			}
		}
	}
	if v, ok := vals["target"]; ok {
		if bt.target, err = strconv.ParseFloat(v, 64); err != nil || bt.target <= 0 || bt.target > 1 {
			return bt, fmt.Errorf("invalid --target %q: want a share in (0, 1]", v)
		}
	}
	if v, ok := vals["tier"]; ok {
		if bt.tier, err = catalog.ParseTier(v); err != nil {
			return bt, fmt.Errorf("invalid --tier: %w", err)
		}
	}
	if v, ok := vals["cap"]; ok {
		if bt.cap, err = time.ParseDuration(v); err != nil || bt.cap <= 0 {
			return bt, fmt.Errorf("invalid --cap %q: want a positive duration like 20m", v)
		}
	}
	return bt, nil
}

// trainOnce runs the pipeline in one mode on the prefix's fresh topics until
// the target or the cap; build builds the pipeline.
func trainOnce(ctx context.Context, build Pipeline, base *config.Config, f *kafka.Factory, log *slog.Logger, bt trainFlags, mode, prefix string, stdout io.Writer) (trainRun, error) {
	cfg := *base
	cfg.TopicPrefix, cfg.Loop = prefix, mode
	cfg.Actor.Mode = "async"
	if mode == "sync" {
		cfg.Actor.Mode = "sync"
	}
	cfg.Learner.Curriculum = true
	port, err := freeLoopbackPort()
	if err != nil {
		return trainRun{}, err
	}
	cfg.WebenvAddr = "127.0.0.1:" + strconv.Itoa(port)
	cfg.WebenvURL = "http://" + cfg.WebenvAddr
	cat := cmdkit.Catalog(&cfg, prefix)
	if err := cmdkit.ApplyTopics(ctx, f, cat, quiet); err != nil {
		return trainRun{}, err
	}
	defer deleteTopics(f, cat)

	services, err := build(&cfg, []string{"webenv", "actor", "joiner", "learner"}, quiet, f, cat)
	if err != nil {
		return trainRun{}, err
	}
	var act *actor.Service
	for _, svc := range services {
		if a, ok := svc.(*actor.Service); ok {
			act = a
		}
	}
	runner := app.NewRunner(quiet)
	start := time.Now()
	cpu0, machine0 := actor.ProcessCPU(), procstat.Machine()
	if err := runner.Start(ctx, services, cfg.StopTimeout); err != nil {
		return trainRun{}, err
	}
	w := newTargetWatch(start, bt)
	wctx, cancelWatch := context.WithCancel(ctx)
	watchErr := make(chan error, 1)
	go func() { watchErr <- w.follow(wctx, f, cat) }()

	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	capT := time.NewTimer(bt.cap)
	defer capT.Stop()
	var runErr error
loop:
	for {
		select {
		case <-ctx.Done():
			runErr = ctx.Err()
			break loop
		case runErr = <-runner.Failed():
			break loop
		case runErr = <-watchErr:
			break loop
		case <-w.reached:
			break loop
		case <-capT.C:
			break loop
		case <-tick.C:
			fmt.Fprintf(stdout, "  %s: %s, %s\n", mode, time.Since(start).Round(time.Second), w.progress())
		}
	}
	wall := time.Since(start)
	cpu := (actor.ProcessCPU() - cpu0 + act.BrowserCPU()).Seconds() / wall.Seconds() / float64(runtime.NumCPU())
	machine := procstat.Util(machine0, procstat.Machine())
	cancelWatch()
	stopErr := cmdkit.Shutdown(runner, cfg.StopTimeout, log)
	if runErr != nil {
		return trainRun{}, fmt.Errorf("unable to finish the %s run: %w", mode, runErr)
	}
	if stopErr != nil {
		log.Warn("the run's pipeline did not stop cleanly", "mode", mode, "err", stopErr)
	}
	r := w.result(mode, wall)
	r.cpu, r.machine = cpu, machine
	return r, nil
}

// freeLoopbackPort asks the kernel for a free loopback port (the run's
// webenv must not collide with a running stack's).
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("unable to find a free port for webenv: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// targetWatch follows a run's committed episodes and tells when the tier's
// held-out success reaches the target (reporter.Stats, as the run report
// judges it).
type targetWatch struct {
	bt      trainFlags
	start   time.Time
	reached chan struct{}

	mu       sync.Mutex
	stats    *reporter.Stats
	episodes int
	steps    int
	at       time.Duration // when reached
	atEps    int
	atSteps  int
	newest   uint64
	done     bool
}

func newTargetWatch(start time.Time, bt trainFlags) *targetWatch {
	return &targetWatch{bt: bt, start: start, reached: make(chan struct{}), stats: reporter.NewStats(start)}
}

func (w *targetWatch) follow(ctx context.Context, f *kafka.Factory, cat *topics.Catalog) error {
	cl, err := f.NewClient("bench-train-watch", kgo.ConsumeTopics(cat.Name(topics.Episodes), cat.Name(topics.Weights), cat.Name(topics.Actions)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	l := &kafka.Loop{Name: "bench train watch", Poller: cl,
		Handle: func(_ context.Context, fs kgo.Fetches) error {
			fs.EachRecord(func(r *kgo.Record) {
				switch r.Topic {
				case cat.Name(topics.Weights):
					if ev, err := eventspb.DecodeWeights(r.Value); err == nil {
						w.mu.Lock()
						w.newest = max(w.newest, ev.GetVersion())
						w.stats.AddWeights(ev.GetVersion(), time.Unix(0, ev.GetCreatedAtUnixNano()))
						w.mu.Unlock()
					}
					return
				case cat.Name(topics.Actions):
					if a, err := eventspb.DecodeAction(r.Value); err == nil {
						w.mu.Lock()
						w.stats.AddAction(a.GetEnvelope().GetProducer(), a.GetPolicyVersion(), time.Unix(0, a.GetEnvelope().GetProducedAtUnixNano()))
						w.mu.Unlock()
					}
					return
				}
				ep, err := eventspb.DecodeEpisode(r.Value)
				if err != nil {
					return
				}
				w.add(ep)
			})
			return nil
		}}
	return l.Run(ctx)
}

// add counts an episode and checks the target.
func (w *targetWatch) add(ep *eventspb.Episode) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stats.AddEpisode(ep)
	if ep.GetAborted() {
		return
	}
	w.episodes++
	w.steps += int(ep.GetLength())
	// Only a held-out episode of the judged tier can move the target.
	if w.done || ep.GetSplit() != eventspb.Split_SPLIT_TEST || ep.GetTier() != eventspb.Tier(w.bt.tier) {
		return
	}
	if d, ok := w.stats.TimeTo(eventspb.Tier(w.bt.tier), w.bt.target, w.bt.window); ok {
		w.done, w.at, w.atEps, w.atSteps = true, d, w.episodes, w.steps
		close(w.reached)
	}
}

// progress is the periodic line: held-out and training success so far.
func (w *targetWatch) progress() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	test := w.stats.Recent(eventspb.Tier(w.bt.tier), true, w.bt.window, now)
	train := w.stats.Recent(eventspb.Tier(w.bt.tier), false, w.bt.window, now)
	return fmt.Sprintf("%d episodes, %d steps, version %d, %s held-out %s (train %s)", w.episodes, w.steps, w.newest, w.bt.tier, fmtShare(test), fmtShare(train))
}

func fmtShare(r reporter.Rate) string {
	if r.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% of %d", 100*r.Value(), r.N)
}

func (w *targetWatch) result(mode string, wall time.Duration) trainRun {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := trainRun{mode: mode, reached: w.done, wall: wall, allSteps: w.steps, versions: w.newest,
		stepsPerSecond: float64(w.steps) / wall.Seconds(), episodesPerSecond: float64(w.episodes) / wall.Seconds()}
	end := time.Now()
	fin := w.stats.Recent(eventspb.Tier(w.bt.tier), true, w.bt.window, end)
	r.curve = w.stats.Curve(eventspb.Tier(w.bt.tier), true, w.bt.window, 15*time.Second, end)
	r.propagation = w.stats.PropagationDelays()
	r.finalRate, r.finalN = fin.Value(), fin.N
	if w.done {
		r.toTarget, r.episodes, r.steps = w.at, w.atEps, w.atSteps
	} else {
		r.toTarget, r.episodes, r.steps = wall, w.episodes, w.steps
	}
	return r
}

// printTrainRuns prints a table of runs.
func printTrainRuns(stdout io.Writer, runs []trainRun, bt trainFlags) {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "run\tmode\ttime to %.0f%%\tepisodes to it\tsteps to it\tsteps/s\tepisodes/s\tcpu\tmachine\tversions\theld-out at end\t\n", 100*bt.target)
	for _, r := range runs {
		tt := r.toTarget.Round(time.Second).String()
		if !r.reached {
			tt = "not reached in " + tt
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%.1f\t%.2f\t%.0f%%\t%s\t%d\t%.0f%% of %d\t\n", r.repeat, r.mode, tt, r.episodes, r.steps,
			r.stepsPerSecond, r.episodesPerSecond, 100*r.cpu, pct(r.machine), r.versions, 100*r.finalRate, r.finalN)
	}
	_ = tw.Flush()
}

// printTrainSummary prints per mode the medians, and the ratio of sync's
// median time to the target over async's (a run that did not reach it
// counts with its cap: the ratio is then a lower bound, and says so).
func printTrainSummary(stdout io.Writer, runs []trainRun, bt trainFlags) {
	med := map[string]float64{}
	capped := map[string]bool{}
	for _, m := range bt.modes {
		var ts []float64
		for _, r := range runs {
			if r.mode == m {
				ts = append(ts, r.toTarget.Seconds())
				capped[m] = capped[m] || !r.reached
			}
		}
		if len(ts) > 0 {
			med[m] = median(ts)
			fmt.Fprintf(stdout, "median time to %.0f%% %s: %s over %d run(s)%s\n", 100*bt.target, m, time.Duration(med[m]*float64(time.Second)).Round(time.Second),
				len(ts), map[bool]string{true: " (a run hit the cap: counted at the cap)", false: ""}[capped[m]])
		}
	}
	a, okA := med["async"]
	s, okS := med["sync"]
	if !okA || !okS || a <= 0 {
		return
	}
	switch {
	case capped["async"]:
		fmt.Fprintf(stdout, "async/sync: not measured (async did not reach the target within the cap)\n")
	case capped["sync"]:
		fmt.Fprintf(stdout, "async reached the target at least %.2fx sooner than sync (sync hit the cap)\n", s/a)
	default:
		fmt.Fprintf(stdout, "async reached the target %.2fx sooner than sync (median wall time to target, sync over async)\n", s/a)
	}
}
