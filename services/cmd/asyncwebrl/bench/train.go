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
	"text/tabwriter"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/procstat"
	"github.com/asyncwebrl/asyncwebrl/services/reporter"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

const benchTrainUsage = `Usage: asyncwebrl bench train [--modes async,sync] [--seeds K] [--target F] [--window N] [--hold H] [--tier T] [--cap D] [--tasks F,...] [--latency L,...] [--executors N,...] [--plot F] [--eval-every D] [--eval-episodes N] [--stop cap|judge] [--curves F] [--record F] [flags]
       asyncwebrl bench train --from F,... [--plot F] [--curves F]
  Time to skill, asynchronous against synchronous RL. Trains the policy
  from random init K times per mode, each run on fresh topics, with the
  same executors, latency profile, learner settings and curriculum, the
  whole pipeline (webenv, actors, joiner, learner) in this process:
    async  as make run does: the actors never wait for the learner, and the
           learner never waits for a batch (-loop=async);
    sync   the classic on-policy loop over the same code (-loop=sync): a
           batch of episodes, one per executor, acted with version v; the
           actors wait until the learner has trained on that batch and
           published v+1; then the next batch.
  The runs are interleaved (async seed 1, sync seed 1, async seed 2, ...), so
  that a drift of the machine falls on both modes alike. Run k of each mode
  has seed k (-seed: the policy's initialisation, the learner's replay and
  curriculum, the actors' sampling, the web server's delays), in async and
  sync alike; -seed S shifts them to S..S+K-1.
  The target is judged on checkpoints, off the training clock: the newest
  version at every D of the run (--eval-every) is evaluated after the run,
  with the pipeline stopped, greedily on the same held-out episodes for
  every checkpoint, mode and seed (N per task, 8 executors, as replay eval
  runs them), and the time to the target is the first checkpoint whose
  success reaches F while the next one's does too (with -policy-backend=lm
  a checkpoint is the base model with that version's trained tensors, as
  replay eval loads it). Why not the run's own
  held-out episodes: a fifth of each mode's episodes, they fill the judge's
  window as fast as the mode runs episodes, so a faster mode was also
  judged sooner (at 24 executors under web, async confirmed a skill ~50 s
  after its policy had it, sync ~2 minutes after). Every run goes to the
  cap (--stop cap): a run stopped by its own judge can end before its
  checkpoints reach F, and then counts as not reached without the
  checkpoints it would have had (12-05, async with -max-policy-lag=4, seed
  2: its judge fired at 6m48s on its own episodes, it stopped at 8m8s of a
  9m cap, its checkpoints at 63-73%).
  The run's own judge is printed beside (rollout judge): its greedy
  held-out success over its last N episodes reaches F and stays there for
  H more (a lucky window does not count). It is the judge with
  --eval-every 0, and --stop judge stops a run one checkpoint after it
  fires (cheaper; the 12-05 behaviour).
  Prints per run the wall time to the target, the episodes and env steps to
  it, steps/s, CPU utilization (cpu: this process and its Chromium processes
  over wall time and cores; machine: the whole machine's busy share, the
  broker included), the versions published, and their means of what each
  trained on: the clip fraction, the samples' staleness (in versions) and
  the share of samples whose behaviour weight was capped (the decoupled
  objective's; 0 under -algo ppo-plain), all over the versions with a
  policy-gradient update, and when the first of those came out (RL from).
  With -demos, a run at its target before then is marked (BC) and the
  summary warns: the behaviour-cloning warm start, which does not depend on
  the rollout's mode, took it there. Then per mode, over its runs:
  how many reached the target, and the median wall time and env steps to it,
  each with a 95% percentile-bootstrap interval (10000 resamples of the runs,
  with a fixed seed: the same runs print the same intervals; none with one
  run). A run that did not reach the target counts at the cap (its time and
  steps then, which understate its own): a median those runs' later values
  could change is a lower bound, marked ≥ (for the time: when half or more
  of a mode's runs did not reach the target). Last, sync/async: sync's
  median over async's (how many times sooner async reached the target; for
  steps, how many more sync took), with a 95% interval from resampling each
  mode's runs independently.
  --modes M      modes to run, comma-separated (default async,sync)
  --seeds K      independent runs of each mode, seeds 1..K (default 5); --repeat K,
                 its former name, is a deprecated alias
  --target F     held-out success to reach (default 0.8)
  --window N     greedy held-out episodes the success is taken over (default 40)
  --hold H       consecutive held-out episodes the success must stay at or above F
                 (default 20; 1: the first crossing counts)
  --tier T       the tier judged (default easy; medium with the long-task set);
                 the curriculum issues tiers up to -max-tier, which defaults to T here
  --cap D        give up a run after D (default 20m)
  --tasks F,...  train on these task families only (the curriculum's -families),
                 judged with --tier set to their tier. Default, when none of
                 --tasks, --tier, -suite and -families is given: the long-task
                 set, MiniWoB++'s click-checkboxes-large (6 steps and more) and
                 ascending-numbers (5), at tier medium with -miniwob-time-limit=off
                 -demos=12 -bc-updates=40 -max-policy-lag=4 (each unless given):
                 the set #38's cells were measured on (loadtest/results, 12-07).
                 With -suite or --tier alone: every family of -suite up to
                 -max-tier
  --latency L    a sweep over latency profiles, comma-separated, e.g. none,web,heavy
                 (default: the one -latency-profile); on MiniWoB++ add
                 -miniwob-time-limit=off: the pages' timers count the injected waits,
                 and under heavy at 24 executors sync's lock-step rounds ran out of
                 click-checkboxes-large's 20 s after two steps (the limit is recorded,
                 and runs with and without it never merge)
  --executors N  a sweep over executor counts, comma-separated, e.g. 8,24 (default:
                 the one -executors); with either sweep every cell (profile x count)
                 runs its K seeds per mode, and a last table gives sync/async per cell
  --plot F       with a sweep, also draw sync/async per cell against the profile's
                 median server delay, a line per executor count, to PNG file F
  --eval-every D the checkpoints' interval (default 1m; 0: judge the target on
                 the run's own held-out episodes, as before 12-05)
  --eval-episodes N
                 held-out episodes per task of each checkpoint (default 10)
  --stop S       with checkpoints, what ends a run before --cap: cap (default:
                 nothing; every checkpoint is evaluated) or judge (one checkpoint
                 after the run's own judge fires; checkpoints evaluated until the
                 target is confirmed)
  --curves F     draw the checkpoints' held-out success per mode (per mode and cell
                 in a sweep) to PNG F against wall time and F-steps.png against env
                 steps: the median over seeds, with a band from the lowest to the
                 highest seed
  --record F     append each run to F as soon as it ends, one JSON object a line
                 (its cell, mode, seed, judging, times, checkpoints; the commit
                 built from), so that a sweep longer than one sitting can be run
                 cell by cell, or seed range by seed range with -seed
  --from F,...   train nothing: read the runs recorded in these files and print
                 them as one invocation would (per cell its runs and summary, then
                 the sweep, with --plot its chart and with --curves the curves).
                 Cells are a latency profile, an executor count and a task set
                 (--tasks); runs of one cell must have been judged alike (suite,
                 tier, target, window, hold, cap, checkpoints, algo) and a cell's
                 mode and seed recorded once. With several task sets the sweep
                 prints each one's episodes' mean length, and the chart draws a
                 line per executor count and task set: the ratio against latency
                 and task length
Flags: -executors (default 8), -brokers (default: the configured broker; embedded for
an in-process one), -suite, -latency-profile, the learner's flags (-algo, -lr,
-batch-size, -replay-ratio, ...), -run-dir, the Kafka security flags.
`

// trainRun is one run of bench train.
type trainRun struct {
	mode            string
	reached         bool
	toTarget, wall  time.Duration
	episodes, steps int // to the target (or the cap)
	allSteps        int
	cpu             float64
	machine         float64 // the whole machine's busy share; 0 where not measured
	versions        uint64
	// clipFrac, staleness and behaviourCapped are means over the
	// versions the run published (versionMetrics).
	clipFrac, staleness, behaviourCapped float64
	// rlVersions counts the versions with a policy-gradient update, and
	// rlAt is when the first came out (0: none): a run at its target
	// before it measured the behaviour-cloning warm start, not RL.
	rlVersions int
	rlAt       time.Duration
	// demos: the run had demonstrations (-demos), so its target may come
	// from behaviour cloning.
	demos bool
	// rolloutReached and rolloutAt are the target as the run's own greedy
	// held-out episodes judged it; with --eval-every, checkpoints are the
	// run's evaluated checkpoints and judge reached and toTarget.
	rolloutReached    bool
	rolloutAt         time.Duration
	checkpoints       []checkpoint
	finalRate         float64
	finalN            int
	seed              int // run k of each mode has seed k
	stepsPerSecond    float64
	episodesPerSecond float64
	// cell is the sweep's cell the run belongs to.
	cell trainCell
	// curve is the tier's held-out success over the run (bench report's
	// learning curves); propagation the versions' publication-to-served
	// delays.
	curve       []reporter.Point
	propagation []time.Duration
	// taskSteps: the training env steps per task (targetWatch.taskSteps).
	taskSteps map[string]int
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
	vals, rest, err := cmdkit.SubFlags(args, []string{"modes", "seeds", "repeat", "target", "window", "hold", "tier", "cap", "latency", "executors", "plot", "tasks", "eval-every", "eval-episodes", "stop", "curves", "record", "from"}, nil)
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	if v, ok := vals["from"]; ok {
		for k := range vals {
			if k != "from" && k != "plot" && k != "curves" {
				return nil, cmdkit.Usage(fmt.Errorf("invalid --%s with --from: --from prints recorded runs, judged as they were recorded (only --plot and --curves apply)", k))
			}
		}
		if len(rest) > 0 {
			return nil, cmdkit.Usage(fmt.Errorf("invalid %s with --from: --from prints recorded runs and trains nothing", strings.Join(rest, " ")))
		}
		files := config.SplitList(v)
		if len(files) == 0 {
			return nil, cmdkit.Usage(fmt.Errorf("invalid --from %q: name at least one file of recorded runs", v))
		}
		return nil, trainFromRecords(files, vals["plot"], vals["curves"], stdout)
	}
	bt, err := parseTrainFlags(vals)
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	var longSet bool
	rest, bt.tier, longSet = applyLongTaskDefaults(vals, rest, bt.tier)
	if v, ok := vals["tasks"]; ok {
		// The curriculum's -families: the learner rejects an unknown one.
		rest = append(rest, "-families="+v)
	}
	if !cmdkit.FlagGiven(rest, "max-tier") {
		rest = append([]string{"-max-tier=" + bt.tier.String()}, rest...)
	}
	cfg, err := cmdkit.Parse(rest, stdout)
	if err != nil {
		return nil, err
	}
	log := cmdkit.NewLogger(cfg, stderr)
	if bt.repeatAlias {
		fmt.Fprintln(stderr, "bench train: --repeat is deprecated, use --seeds (the same count of runs per mode)")
	}
	f, closeKafka, err := benchKafka(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer closeKafka()
	id := cmdkit.RandomID()
	core := "shared (no -learner-core)"
	if c := cfg.Learner.Core; c >= 0 {
		core = fmt.Sprintf("core %d its own, the rest on the others", c)
	}
	execs, lats := strconv.Itoa(cfg.Actor.Executors), cfg.Webenv.LatencyProfile
	if len(bt.executors) > 0 {
		var ns []string
		for _, n := range bt.executors {
			ns = append(ns, strconv.Itoa(n))
		}
		execs = strings.Join(ns, ",")
	}
	if len(bt.latencies) > 0 {
		lats = strings.Join(bt.latencies, ",")
	}
	if longSet {
		fmt.Fprintf(stdout, "bench train: the default long-task set (name --tasks, --tier or -suite for another), with %s where not given\n", strings.Join(longTaskFlags, " "))
	}
	if cfg.Learner.Families != "" {
		fmt.Fprintf(stdout, "bench train: tasks %s\n", cfg.Learner.Families)
	}
	suite := cfg.Suite
	if l := timeLimitName(cfg); l != "" {
		suite += " (time limit " + l + ")"
	}
	fmt.Fprintf(stdout, "bench train: suite %s, tiers up to %s, target %s held-out ≥ %.0f%% over the last %d greedy episodes, held for %d held-out episodes, cap %s, seeds %s, %s executors, latency %s, %d cores, learner %s, algo %s, broker %s\n",
		suite, cfg.Learner.MaxTier, bt.tier, 100*bt.target, bt.window, bt.hold, bt.cap, seedRange(cfg.Seed, bt.seeds), execs, lats, runtime.NumCPU(), core, cfg.Learner.Algo, strings.Join(cfg.Brokers, ","))
	if bt.evalEvery > 0 {
		stops := "every run goes to the cap (--stop cap)"
		if bt.stop == "judge" {
			stops = "a run stops one checkpoint after the run's own judge above fires (--stop judge)"
		}
		fmt.Fprintf(stdout, "bench train: the target judged on checkpoints every %s (the newest version, evaluated after the run on %d held-out episodes a task, seeds from %d, %d executors); %s\n",
			bt.evalEvery, bt.evalEpisodes, evalSeedBase, evalExecutors, stops)
	}
	if l := cfg.Learner; l.MaxStaleness > 0 || l.MaxPolicyLag > 0 {
		fmt.Fprintf(stdout, "async learner: max staleness %g versions (the scheduler's bound), max policy lag %d (0: off)\n", l.MaxStaleness, l.MaxPolicyLag)
	}
	cells, err := bt.sweep(cfg)
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	if bt.record != "" {
		fmt.Fprintf(stdout, "bench train: each run recorded to %s as it ends (bench train --from %s prints them again, merged with other sittings' runs)\n", bt.record, bt.record)
	}
	var runs []trainRun
	for ci, cell := range cells {
		ccfg := *cfg
		ccfg.Webenv.LatencyProfile, ccfg.Actor.Executors = cell.latency, cell.executors
		if ccfg.Actor.Browsers > cell.executors {
			ccfg.Actor.Browsers = 0 // one per 4 executors
		}
		if len(cells) > 1 {
			fmt.Fprintf(stdout, "\ncell %d of %d: latency profile %s, %d executors\n", ci+1, len(cells), cell.latency, cell.executors)
		}
		var cellRuns []trainRun
		// Interleaved, seed by seed: a drift of the machine (a neighbour, a
		// warming broker) falls on both modes alike.
		for seed := 1; seed <= bt.seeds; seed++ {
			for _, mode := range bt.modes {
				fmt.Fprintf(stdout, "seed %d of %d, %s: training from random init...\n", seed, bt.seeds, mode)
				r, err := trainOnce(ctx, build, &ccfg, f, log, bt, mode, seed, id, stdout)
				if err != nil {
					return nil, err
				}
				r.seed, r.cell, r.demos = seed, cell, ccfg.Learner.Demos > 0 && ccfg.Learner.BCUpdates > 0
				cellRuns = append(cellRuns, r)
				if bt.record != "" {
					if err := (recorder{bt.record}).write(newRunRecord(r, bt, &ccfg, max(cfg.Seed, 1)+uint64(seed)-1)); err != nil {
						return nil, err
					}
				}
				printTrainRuns(stdout, cellRuns[len(cellRuns)-1:], bt)
			}
		}
		fmt.Fprintln(stdout)
		printTrainRuns(stdout, cellRuns, bt)
		printTrainSummary(stdout, cellRuns, bt)
		runs = append(runs, cellRuns...)
	}
	if bt.curves != "" {
		paths, err := writeCheckpointCurves(bt.curves, runs, bt.target)
		if err != nil {
			return runs, err
		}
		if len(paths) > 0 {
			fmt.Fprintf(stdout, "checkpoint curves: %s\n", strings.Join(paths, ", "))
		}
	}
	if len(cells) > 1 {
		fmt.Fprintln(stdout)
		printSweep(stdout, runs, cells, func(trainCell) float64 { return bt.target })
		if bt.plot != "" {
			if err := sweepChart(runs, cells).WriteFile(bt.plot); err != nil {
				return runs, err
			}
			fmt.Fprintf(stdout, "the ratio per cell: %s\n", bt.plot)
		}
	}
	return runs, nil
}

// trainFlags are bench train's own flags.
type trainFlags struct {
	modes []string
	// seeds: runs of each mode, seeds 1..seeds (default 5); repeatAlias:
	// they were given as --repeat, the deprecated name.
	seeds       int
	repeatAlias bool
	// window: held-out episodes the success is taken over (default 40);
	// hold: consecutive held-out episodes it must stay at the target
	// (default 20).
	window, hold int
	target       float64 // default 0.8
	tier         catalog.Tier
	cap          time.Duration // default 20m
	// latencies, executors: the sweep's axes (default the one cell of
	// -latency-profile and -executors); plot: where the sweep's chart goes
	// (default none).
	latencies []string
	executors []int
	plot      string
	// curves: where the checkpoint curves go (default none): this PNG
	// against wall time, and beside it (-steps.png) against env steps.
	curves string
	// record: the file each finished run is appended to, a JSON line
	// (default none; bench train --from reads it back).
	record string
	// evalEvery: the checkpoints' interval (default 1m; 0: the target is
	// judged on the rollout's own held-out episodes); evalEpisodes: held-out
	// episodes per task of each checkpoint's evaluation (default 10).
	evalEvery    time.Duration
	evalEpisodes int
	// stop: what ends a run before the cap with checkpoints on: "cap"
	// (default: nothing, every run goes to the cap) or "judge" (one
	// checkpoint after the run's own judge fires).
	stop string
}

func parseTrainFlags(vals map[string]string) (trainFlags, error) {
	bt := trainFlags{modes: []string{"async", "sync"}, seeds: 5, window: 40, hold: 20, target: 0.8, tier: catalog.Easy, cap: 20 * time.Minute,
		evalEvery: time.Minute, evalEpisodes: 10, stop: "cap"}
	var err error
	ints := map[string]*int{"seeds": &bt.seeds, "window": &bt.window, "hold": &bt.hold, "eval-episodes": &bt.evalEpisodes}
	if v, ok := vals["repeat"]; ok {
		// The old name keeps old commands working; with both, which one
		// was meant is unclear.
		if _, both := vals["seeds"]; both {
			return bt, fmt.Errorf("invalid --repeat %q: it is the deprecated name of --seeds, give one of them", v)
		}
		ints["repeat"], bt.repeatAlias = &bt.seeds, true
	}
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
	for name, dst := range ints {
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
	if v, ok := vals["latency"]; ok {
		for _, l := range config.SplitList(v) {
			if _, err := webenv.ParseProfile(l); err != nil {
				return bt, fmt.Errorf("invalid --latency: %w", err)
			}
			if !slices.Contains(bt.latencies, l) {
				bt.latencies = append(bt.latencies, l)
			}
		}
		if len(bt.latencies) == 0 {
			return bt, fmt.Errorf("invalid --latency %q: name at least one profile", v)
		}
	}
	if v, ok := vals["executors"]; ok {
		for _, e := range config.SplitList(v) {
			n, err := strconv.Atoi(e)
			if err != nil || n < 1 || n > 256 {
				return bt, fmt.Errorf("invalid --executors %q: want counts in 1..256, comma-separated", v)
			}
			if !slices.Contains(bt.executors, n) {
				bt.executors = append(bt.executors, n)
			}
		}
		if len(bt.executors) == 0 {
			return bt, fmt.Errorf("invalid --executors %q: name at least one count", v)
		}
	}
	bt.plot, bt.curves, bt.record = vals["plot"], vals["curves"], vals["record"]
	if v, ok := vals["cap"]; ok {
		if bt.cap, err = time.ParseDuration(v); err != nil || bt.cap <= 0 {
			return bt, fmt.Errorf("invalid --cap %q: want a positive duration like 20m", v)
		}
	}
	if v, ok := vals["eval-every"]; ok {
		if bt.evalEvery, err = time.ParseDuration(v); err != nil || bt.evalEvery < 0 || bt.evalEvery > 0 && bt.evalEvery < 10*time.Second {
			return bt, fmt.Errorf("invalid --eval-every %q: want 0 (judge the rollout's own held-out episodes) or a duration of at least 10s", v)
		}
	}
	if v, ok := vals["stop"]; ok {
		if v != "cap" && v != "judge" {
			return bt, fmt.Errorf("invalid --stop %q: want cap (every run goes to --cap) or judge (one checkpoint after the run's own judge fires)", v)
		}
		bt.stop = v
	}
	return bt, nil
}

// trainOnce runs the pipeline in one mode on the prefix's fresh topics until
// the target or the cap; build builds the pipeline.
func trainOnce(ctx context.Context, build Pipeline, base *config.Config, f *kafka.Factory, log *slog.Logger, bt trainFlags, mode string, seed int, id string, stdout io.Writer) (trainRun, error) {
	// The seed names the run's topics and seeds its randomness (-seed
	// offsets it: seed 1 of -seed=10 is 10).
	prefix := fmt.Sprintf("bench_train_%s_%s_%d.", id, mode, seed)
	cfg := *base
	cfg.TopicPrefix, cfg.Loop = prefix, mode
	cfg.Seed = max(base.Seed, 1) + uint64(seed) - 1
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
	reached := w.reached
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
		case <-reached:
			if bt.evalEvery <= 0 {
				break loop
			}
			reached = nil
			if bt.stop == "judge" {
				// One more checkpoint: the one after the crossing confirms it.
				capT.Reset(min(bt.evalEvery+time.Second, max(0, bt.cap-time.Since(start))))
			}
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
	if bt.evalEvery > 0 {
		fmt.Fprintf(stdout, "  %s: evaluating its checkpoints (every %s, %d held-out episodes a task, %d executors)...\n", mode, bt.evalEvery, bt.evalEpisodes, evalExecutors)
		if err := evaluateCheckpoints(ctx, &cfg, f, bt, id, fmt.Sprintf("%s%d", mode, seed), r.checkpoints); err != nil {
			return trainRun{}, err
		}
		r.judgeCheckpoints(bt.target)
		fmt.Fprintf(stdout, "  %s: checkpoints %s\n", mode, fmtCheckpoints(r.checkpoints))
	}
	if t := fmtTaskSteps(r.taskSteps); t != "" {
		fmt.Fprintf(stdout, "  %s: training steps by task: %s\n", mode, t)
	}
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

// printTrainRuns prints a table of runs.
func printTrainRuns(stdout io.Writer, runs []trainRun, bt trainFlags) {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "seed\tmode\ttime to %.0f%%\trollout judge\tepisodes to it\tsteps to it\tsteps/s\tepisodes/s\tcpu\tmachine\tversions\tRL from\tclip\tstaleness\tcapped\theld-out at end\t\n", 100*bt.target)
	for _, r := range runs {
		tt := r.toTarget.Round(time.Second).String()
		if !r.reached {
			tt = "not reached in " + tt
		} else if r.beforeRL() {
			tt += " (BC)"
		}
		rl := "none"
		if r.rlAt > 0 {
			rl = r.rlAt.Round(time.Second).String()
		}
		rj := r.rolloutAt.Round(time.Second).String()
		if !r.rolloutReached {
			rj = "not reached"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%.1f\t%.2f\t%.0f%%\t%s\t%d\t%s\t%.1f%%\t%.2f\t%.1f%%\t%.0f%% of %d\t\n", r.seed, r.mode, tt, rj, r.episodes, r.steps,
			r.stepsPerSecond, r.episodesPerSecond, 100*r.cpu, pct(r.machine), r.versions, rl, 100*r.clipFrac, r.staleness, 100*r.behaviourCapped, 100*r.finalRate, r.finalN)
	}
	_ = tw.Flush()
}

// seedRange prints the seeds of n runs: "1", or "1-5".
func seedRange(first uint64, n int) string {
	first = max(first, 1)
	if n == 1 {
		return fmt.Sprint(first)
	}
	return fmt.Sprintf("%d-%d", first, first+uint64(n)-1)
}

// beforeRL reports whether the run reached its target before its first
// policy-gradient version: with demonstrations, the behaviour-cloning warm
// start took it there, which both modes do alike, whatever their rollout.
// (Without demonstrations every update is a policy-gradient one.)
func (r trainRun) beforeRL() bool {
	return r.demos && r.reached && (r.rlAt == 0 || r.toTarget < r.rlAt)
}
