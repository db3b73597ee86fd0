package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

const benchRolloutUsage = `Usage: asyncwebrl bench rollout [--profile P[,P...]] [--suites S[:TIER][,...]] [--repeat K] [--executors N[,N...]] [--duration D] [--min-ratio R] [--modes M] [flags]
  Starts webenv in-process with latency profile P and the embedded Kafka
  (unless -brokers is given), then runs the actor in async mode and in the
  strict synchronous baseline (lock-step batches of episodes), one after
  the other on the same executors, browsers, policy and tasks, each for a
  warm-up and D, and prints for each steps/s, trajectories/hour, CPU
  utilization (cpu: actor + Chromium CPU time / wall / cores; machine:
  the whole machine's busy share, the broker included), the mean
  inference batch and the executors' idle share, and the async/sync
  steps/s ratio.
  --profile P      webenv latency profile: none, web, heavy, async, fixed:200ms, ... (default web);
                   a comma list runs each in turn
  --repeat K       runs of the modes per profile (default 1); with K > 1 or several
                   profiles a summary table gives the medians over the runs
  --executors N    executors (default 8); a comma list (8,16,24,32) sweeps the counts,
                   each with every mode, after a run of one executor alone (async):
                   the summary's efficiency is async steps/s over N times that one's
  --browsers M     Chromium processes (default: one per 4 executors)
  --duration D     measured time per mode (default 60s: the web profile's heavy tail makes short runs noisy)
  --warmup W       warm-up per mode before measuring (default 10s)
  --min-ratio R    exit 1 when async/sync (the median over the runs) is below R
                   (default 0: report only; one profile only)
  --modes M        the modes to run, comma-separated (default async,sync); add
                   sync-step for the lock-step baseline whose episodes
                   restart independently (its ratio is printed too), and raw
                   for the floor of a step on the same browsers: each executor
                   only clicks and screenshots its tab (no settling, DOM read,
                   inference or Kafka); async/raw is the pipeline's share of it;
                   and async-pairs for async with the settler's frame pair on every
                   page (the design before the DOM-described one-frame settle)
  -suite S         the tasks the executors run: builtin (default), miniwob (the
                   MiniWoB++ tasks the action space can express, train seeds; the
                   pages from make setup, -miniwob-dir) or all
  --suites L       task sets run in turn on the same executors and browsers, each
                   a suite with an optional hardest tier, e.g. builtin:easy,miniwob
                   (default: -suite, every tier); with several, a table sets their
                   episodes/s and steps/s side by side
Flags: -brokers (default: embedded), -run-dir, the Kafka security flags (see asyncwebrl -help).
`

// modeAsyncPairs is a bench-only mode: async with actor.Visual comparing a
// frame pair on every page (AlwaysCompare), the baseline of the settler's
// one-frame path on pages the DOM describes.
const modeAsyncPairs actor.Mode = "async-pairs"

func runBenchRollout(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	_, err := benchRollout(ctx, args, stdout, stderr)
	return err
}

// benchRollout is bench rollout, returning its summaries.
func benchRollout(ctx context.Context, args []string, stdout, stderr io.Writer) ([]rolloutSummary, error) {
	if cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, benchRolloutUsage)
		return nil, nil
	}
	vals, rest, err := cmdkit.SubFlags(args, []string{"profile", "executors", "browsers", "duration", "warmup", "min-ratio", "modes", "repeat", "suites"}, nil)
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	profile, browsers, repeat := "web", 0, 1
	duration, warmup, minRatio := 60*time.Second, 10*time.Second, 0.0
	if v, ok := vals["profile"]; ok {
		profile = v
	}
	counts, err := parseCounts(cmp.Or(vals["executors"], "8"))
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	for name, dst := range map[string]*int{"browsers": &browsers, "repeat": &repeat} {
		if v, ok := vals[name]; ok {
			if *dst, err = strconv.Atoi(v); err != nil || *dst < 1 {
				return nil, cmdkit.Usage(fmt.Errorf("invalid --%s %q: want a positive integer", name, v))
			}
		}
	}
	for name, dst := range map[string]*time.Duration{"duration": &duration, "warmup": &warmup} {
		if v, ok := vals[name]; ok {
			if *dst, err = time.ParseDuration(v); err != nil || *dst < 0 || (name == "duration" && *dst == 0) {
				return nil, cmdkit.Usage(fmt.Errorf("invalid --%s %q: want a positive duration like 30s", name, v))
			}
		}
	}
	if v, ok := vals["min-ratio"]; ok {
		if minRatio, err = strconv.ParseFloat(v, 64); err != nil || minRatio < 0 {
			return nil, cmdkit.Usage(fmt.Errorf("invalid --min-ratio %q: want a non-negative number", v))
		}
	}
	modes := []actor.Mode{actor.ModeAsync, actor.ModeSync}
	if v, ok := vals["modes"]; ok {
		modes = modes[:0]
		for _, m := range config.SplitList(v) {
			mode := actor.Mode(m)
			if valid := append(slices.Clone(config.ActorModes), string(actor.ModeRaw), string(modeAsyncPairs)); !slices.Contains(valid, m) {
				return nil, cmdkit.Usage(fmt.Errorf("invalid --modes %q: want a comma list of %s", v, strings.Join(valid, ", ")))
			}
			if !slices.Contains(modes, mode) {
				modes = append(modes, mode)
			}
		}
	}
	if len(modes) == 0 {
		return nil, cmdkit.Usage(fmt.Errorf("invalid --modes %q: name at least one mode", vals["modes"]))
	}
	if minRatio > 0 && (!slices.Contains(modes, actor.ModeAsync) || !slices.Contains(modes, actor.ModeSync)) {
		return nil, cmdkit.Usage(fmt.Errorf("--min-ratio needs the async and sync modes in --modes"))
	}
	var profs []webenv.Profile
	for _, name := range config.SplitList(profile) {
		prof, err := webenv.ParseProfile(name)
		if err != nil {
			return nil, cmdkit.Usage(err)
		}
		profs = append(profs, prof)
	}
	if len(profs) == 0 {
		return nil, cmdkit.Usage(fmt.Errorf("invalid --profile %q: name at least one profile", profile))
	}
	if minRatio > 0 && len(profs) > 1 {
		return nil, cmdkit.Usage(fmt.Errorf("--min-ratio judges one profile; got %d", len(profs)))
	}
	// The embedded broker unless brokers are configured on purpose.
	if !brokersGiven(rest) {
		rest = append([]string{"-brokers=" + "embedded"}, rest...)
	}
	cfg, err := cmdkit.Parse(rest, stdout)
	if err != nil {
		return nil, err
	}
	sets, err := parseTaskSets(cmp.Or(vals["suites"], cfg.Suite))
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	if minRatio > 0 && len(sets) > 1 {
		return nil, cmdkit.Usage(fmt.Errorf("--min-ratio judges one task set; got %d in --suites", len(sets)))
	}
	if minRatio > 0 && len(counts) > 1 {
		return nil, cmdkit.Usage(fmt.Errorf("--min-ratio judges one executor count; got %d in --executors", len(counts)))
	}
	log := cmdkit.NewLogger(cfg, stderr)
	f, closeKafka, err := benchKafka(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer closeKafka()
	cat := cmdkit.Catalog(cfg, "bench_rollout_"+cmdkit.RandomID()+"_")
	if err := cmdkit.ApplyTopics(ctx, f, cat, quiet); err != nil {
		return nil, err
	}
	defer deleteTopics(f, cat)

	bflags, err := env.ParseBrowserFlags(cfg.Actor.BrowserFlags)
	if err != nil {
		return nil, cmdkit.Usage(fmt.Errorf("invalid -browser-flags: %w", err))
	}
	var sums []rolloutSummary
	for _, prof := range profs {
		for _, set := range sets {
			setup := rolloutSetup{cfg: cfg, set: set, serve: servedSuite(sets), prof: prof, f: f, cat: cat, log: log,
				browsers: browsers, warmup: warmup, duration: duration, modes: modes, bflags: bflags}
			var single []float64 // one executor alone, async: the efficiency's unit
			if len(counts) > 1 {
				for k := range repeat {
					fmt.Fprintf(stdout, "bench rollout: suite %s, profile %s, one executor alone (async), run %d of %d\n", set, prof.Name, k+1, repeat)
					one := setup
					one.executors, one.browsers, one.modes = 1, 1, []actor.Mode{actor.ModeAsync}
					runs, err := rolloutOnce(ctx, one)
					if err != nil {
						return nil, err
					}
					single = append(single, runs[0].StepsPerSec())
					fmt.Fprintf(stdout, "  one executor: %.2f steps/s\n", runs[0].StepsPerSec())
				}
			}
			for _, n := range counts {
				sum := rolloutSummary{profile: prof.Name, suite: set.String(), executors: n}
				for k := range repeat {
					fmt.Fprintf(stdout, "bench rollout: suite %s (%d tasks), profile %s, %d executors, %s measured per mode after %s warm-up, %d cores, broker %s",
						set, len(set.families), prof.Name, n, duration, warmup, runtime.NumCPU(), strings.Join(cfg.Brokers, ","))
					if repeat > 1 {
						fmt.Fprintf(stdout, ", run %d of %d", k+1, repeat)
					}
					fmt.Fprintln(stdout)
					run := setup
					run.executors = n
					runs, err := rolloutOnce(ctx, run)
					if err != nil {
						return nil, err
					}
					if err := printRolloutRuns(stdout, runs, minRatio); err != nil {
						return nil, err
					}
					sum.add(runs)
					if len(single) > k {
						sum.addEfficiency(runs, n, single[k])
					}
				}
				sums = append(sums, sum)
			}
		}
	}
	if len(sums) > 1 || repeat > 1 {
		fmt.Fprintf(stdout, "\nmedians over %d run(s) per profile, suite and executor count:\n", repeat)
		if err := printRolloutSummary(stdout, sums, modes); err != nil {
			return nil, err
		}
	}
	if ratio, ok := sums[0].medianRatio(); ok && ratio < minRatio {
		return sums, errRatio{"async/sync steps/s", ratio, minRatio}
	}
	return sums, nil
}

// rolloutSetup is what one run of the modes needs.
type rolloutSetup struct {
	cfg                 *config.Config
	set                 taskSet
	serve               catalog.Suite // what webenv serves: every set's suite
	prof                webenv.Profile
	f                   *kafka.Factory
	cat                 *topics.Catalog
	log                 *slog.Logger
	executors, browsers int
	warmup, duration    time.Duration
	modes               []actor.Mode
	bflags              []env.BrowserOption
}

// rolloutOnce serves the profile's webenv and runs each mode in turn.
func rolloutOnce(ctx context.Context, c rolloutSetup) ([]actor.BenchRun, error) {
	srv, err := webenv.New(webenv.WithProfile(c.prof), webenv.WithLogger(quiet),
		webenv.WithSuite(c.serve), webenv.WithMiniWoBDir(c.cfg.Webenv.MiniWoBDir))
	if err != nil {
		return nil, err
	}
	if err := srv.Start(ctx); err != nil {
		return nil, err
	}
	defer func() { _ = srv.Stop(context.Background()) }()
	wcfg := *c.cfg
	wcfg.WebenvURL = srv.URL()
	opts := []actor.Option{
		actor.WithExecutors(c.executors), actor.WithBrowsers(c.browsers), actor.WithWebenvURL(srv.URL()),
		actor.WithBrowserOptions(env.WithExecPath(c.cfg.Actor.BrowserPath)),
		actor.WithBrowserOptions(c.bflags...),
		actor.WithLogger(c.log.With("bench", "rollout")),
		actor.WithFamilies(c.set.families...),
		actor.WithRequestPerAction(c.prof.Delays()),
	}
	var runs []actor.BenchRun
	for _, mode := range c.modes {
		bc := actor.BenchConfig{Config: &wcfg, Factory: c.f, Catalog: c.cat, Warmup: c.warmup, Duration: c.duration,
			Options: append(slices.Clone(opts), actor.WithInstanceID("bench-"+string(mode)), actor.WithTaskGroup(c.cat.Prefix+"bench-"+string(mode)))}
		run := mode
		if mode == modeAsyncPairs {
			run = actor.ModeAsync
			bc.Options = append(bc.Options, actor.WithSettler(actor.Visual{AlwaysCompare: true}))
		}
		r, err := actor.BenchMode(ctx, bc, run)
		if err != nil {
			return nil, err
		}
		r.Mode = mode
		runs = append(runs, r)
	}
	return runs, nil
}

// printRolloutRuns prints one run's table and its ratios.
func printRolloutRuns(stdout io.Writer, runs []actor.BenchRun, minRatio float64) error {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tsteps/s\tepisodes/s\ttraj/h\tcpu\tmachine\tsteps\tepisodes\taborted\tunstable obs\tmean batch\tobserve\tthink\tact\twait\tidle\t")
	for _, r := range runs {
		sh := func(d time.Duration) string {
			if t := r.Split.Total(); t > 0 {
				return fmt.Sprintf("%.0f%%", 100*d.Seconds()/t.Seconds())
			}
			return "-"
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.2f\t%.0f\t%.0f%%\t%s\t%d\t%d\t%d\t%d\t%.2f\t%s\t%s\t%s\t%s\t%s\t\n", r.Mode, r.StepsPerSec(), r.TrajPerHour()/3600, r.TrajPerHour(), 100*r.CPUUtil(), pct(r.Machine),
			r.Steps, r.Episodes, r.Aborted, r.Unstable, r.MeanBatch(),
			sh(r.Split.Observe), sh(r.Split.Think), sh(r.Split.Act), sh(r.Split.Wait), sh(r.Split.Idle))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r, ok := rolloutRatio(runs, actor.ModeRaw); ok {
		fmt.Fprintf(stdout, "ratio async/raw steps/s: %.2f (the pipeline's steps over the raw loop's on the same browsers)\n", r)
	}
	if r, ok := rolloutRatio(runs, modeAsyncPairs); ok {
		fmt.Fprintf(stdout, "ratio async/async-pairs steps/s: %.2f (one frame on pages the DOM describes over a frame pair on every page)\n", r)
	}
	for _, base := range []actor.Mode{actor.ModeSync, actor.ModeSyncStep} {
		r, ok := rolloutRatio(runs, base)
		if !ok {
			continue
		}
		if base == actor.ModeSync {
			fmt.Fprintf(stdout, "ratio async/sync steps/s: %.2f (min %.2f)", r, minRatio)
		} else {
			fmt.Fprintf(stdout, "ratio async/%s steps/s: %.2f", base, r)
		}
		for _, run := range runs {
			if run.Mode == base {
				fmt.Fprintf(stdout, "; ceiling %.2f (never-idle executors at %s's busy time per step: 1/(1-idle))", run.Ceiling(), base)
			}
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// rolloutRatio is async steps/s over base's in one run.
func rolloutRatio(runs []actor.BenchRun, base actor.Mode) (float64, bool) {
	rate := map[actor.Mode]float64{}
	for _, r := range runs {
		rate[r.Mode] = r.StepsPerSec()
	}
	a, okA := rate[actor.ModeAsync]
	b, okB := rate[base]
	if !okA || !okB {
		return 0, false
	}
	if b <= 0 {
		return 0, true
	}
	return a / b, true
}

// rolloutSummary collects the runs of one profile and task set.
type rolloutSummary struct {
	profile   string
	suite     string
	executors int
	eff       []float64 // async steps/s over executors × one executor's, per run
	steps     map[actor.Mode][]float64
	eps       map[actor.Mode][]float64
	cpu       map[actor.Mode][]float64
	machine   map[actor.Mode][]float64 // the whole machine's busy share (BenchRun.Machine)
	ratios    map[actor.Mode][]float64 // async over the mode, per run
	ceils     map[actor.Mode][]float64 // the mode's BenchRun.Ceiling, per run
}

func (s *rolloutSummary) add(runs []actor.BenchRun) {
	if s.steps == nil {
		s.steps, s.cpu, s.ratios, s.ceils = map[actor.Mode][]float64{}, map[actor.Mode][]float64{}, map[actor.Mode][]float64{}, map[actor.Mode][]float64{}
		s.eps, s.machine = map[actor.Mode][]float64{}, map[actor.Mode][]float64{}
	}
	for _, r := range runs {
		s.steps[r.Mode] = append(s.steps[r.Mode], r.StepsPerSec())
		s.eps[r.Mode] = append(s.eps[r.Mode], r.TrajPerHour()/3600)
		s.cpu[r.Mode] = append(s.cpu[r.Mode], r.CPUUtil())
		s.machine[r.Mode] = append(s.machine[r.Mode], r.Machine)
		if r.Mode == actor.ModeAsync {
			continue
		}
		if ratio, ok := rolloutRatio(runs, r.Mode); ok {
			s.ratios[r.Mode] = append(s.ratios[r.Mode], ratio)
			s.ceils[r.Mode] = append(s.ceils[r.Mode], r.Ceiling())
		}
	}
}

// addEfficiency records a run's async steps/s over n times one executor's
// alone (single): 1 when n executors do n times one's work.
func (s *rolloutSummary) addEfficiency(runs []actor.BenchRun, n int, single float64) {
	for _, r := range runs {
		if r.Mode == actor.ModeAsync && single > 0 {
			s.eff = append(s.eff, r.StepsPerSec()/(float64(n)*single))
		}
	}
}

// medianRatio is the median over the runs of async/sync.
func (s rolloutSummary) medianRatio() (float64, bool) {
	rs := s.ratios[actor.ModeSync]
	if len(rs) == 0 {
		return 0, false
	}
	return median(rs), true
}

// pct prints a machine share, "-" where it was not measured (off Linux).
func pct(share float64) string {
	if share <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*share)
}

// median of a non-empty list; the mean of the middle two for an even count.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// printRolloutSummary prints one line per profile and task set: median
// steps/s, episodes/s and CPU of each mode, and the medians of the per-run ratios and of each
// baseline's ceiling (BenchRun.Ceiling).
func printRolloutSummary(stdout io.Writer, sums []rolloutSummary, modes []actor.Mode) error {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := "profile\tsuite\texecutors\t"
	for _, m := range modes {
		head += string(m) + " steps/s\t" + string(m) + " episodes/s\t" + string(m) + " cpu\t" + string(m) + " machine\t"
	}
	for _, m := range modes {
		if m != actor.ModeAsync && slices.Contains(modes, actor.ModeAsync) {
			head += "async/" + string(m) + "\t" + string(m) + " ceiling\t"
		}
	}
	eff := slices.ContainsFunc(sums, func(s rolloutSummary) bool { return len(s.eff) > 0 })
	if eff {
		head += "efficiency\t"
	}
	fmt.Fprintln(tw, head)
	for _, s := range sums {
		line := fmt.Sprintf("%s\t%s\t%d\t", s.profile, s.suite, s.executors)
		for _, m := range modes {
			line += fmt.Sprintf("%.1f\t%.2f\t%.0f%%\t%s\t", median(s.steps[m]), median(s.eps[m]), 100*median(s.cpu[m]), pct(median(s.machine[m])))
		}
		for _, m := range modes {
			if m != actor.ModeAsync && slices.Contains(modes, actor.ModeAsync) {
				line += fmt.Sprintf("%.2f\t%.2f\t", median(s.ratios[m]), median(s.ceils[m]))
			}
		}
		if eff {
			if len(s.eff) > 0 {
				line += fmt.Sprintf("%.2f\t", median(s.eff))
			} else {
				line += "-\t"
			}
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// brokersGiven reports whether -brokers is on the command line or in the
// environment.
func brokersGiven(args []string) bool { return cmdkit.FlagGiven(args, "brokers") }

// taskSet is one entry of --suites: a suite's schedulable tasks up to a
// tier.
type taskSet struct {
	suite    catalog.Suite
	maxTier  catalog.Tier // 0: every tier
	families []string
}

func (t taskSet) String() string {
	if t.maxTier == 0 {
		return string(t.suite)
	}
	return string(t.suite) + ":" + t.maxTier.String()
}

// parseTaskSets parses "suite[:tier],..." into the task sets, each with the
// families the actors' local generator draws (catalog.Schedulable: the
// MiniWoB++ tasks the action space can express, on train seeds).
func parseTaskSets(list string) ([]taskSet, error) {
	var sets []taskSet
	for _, item := range config.SplitList(list) {
		name, tier, hasTier := strings.Cut(item, ":")
		suite, err := catalog.ParseSuite(name)
		if err != nil {
			return nil, fmt.Errorf("invalid --suites %q: %w", list, err)
		}
		set := taskSet{suite: suite}
		if hasTier {
			if set.maxTier, err = catalog.ParseTier(tier); err != nil {
				return nil, fmt.Errorf("invalid --suites %q: %w", list, err)
			}
		}
		for _, f := range catalog.Schedulable(suite) {
			if set.maxTier == 0 || f.Tier <= set.maxTier {
				set.families = append(set.families, f.Name)
			}
		}
		if len(set.families) == 0 {
			return nil, fmt.Errorf("invalid --suites %q: %s has no task the action space can express", list, set)
		}
		sets = append(sets, set)
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("invalid --suites %q: name at least one suite", list)
	}
	return sets, nil
}

// servedSuite is the suite webenv serves so that every set's tasks exist.
func servedSuite(sets []taskSet) catalog.Suite {
	var b, m bool
	for _, s := range sets {
		b = b || s.suite.HasBuiltin()
		m = m || s.suite.HasMiniWoB()
	}
	switch {
	case b && m:
		return catalog.SuiteAll
	case m:
		return catalog.SuiteMiniWoB
	}
	return catalog.SuiteBuiltin
}

// parseCounts parses --executors: one count or a comma list (a sweep).
func parseCounts(v string) ([]int, error) {
	var out []int
	for _, f := range config.SplitList(v) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("invalid --executors %q: want positive integers, e.g. 8 or 8,16,24,32", v)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("invalid --executors %q: name at least one count", v)
	}
	return out, nil
}

// benchKafka connects a benchmark to the configured brokers (or starts the
// embedded one) and checks one answers.
func benchKafka(ctx context.Context, cfg *config.Config) (*kafka.Factory, func(), error) {
	f, closeKafka, err := kafka.Connect(cfg, quiet)
	if err != nil {
		return nil, nil, err
	}
	if err := f.Ping(ctx, 10*time.Second); err != nil {
		closeKafka()
		return nil, nil, err
	}
	return f, closeKafka, nil
}
