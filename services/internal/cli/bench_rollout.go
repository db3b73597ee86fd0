package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

const benchRolloutUsage = `Usage: asyncwebrl bench rollout [--profile P] [--executors N] [--duration D] [--min-ratio R] [--modes M] [flags]
  Starts webenv in-process with latency profile P and the embedded Kafka
  (unless -brokers is given), then runs the actor in async mode and in the
  strict synchronous baseline (lock-step batches of episodes), one after
  the other on the same executors, browsers, policy and tasks, each for a
  warm-up and D, and prints for each steps/s, trajectories/hour, CPU
  utilization (actor + Chromium CPU time / wall / cores), the mean
  inference batch and the executors' idle share, and the async/sync
  steps/s ratio.
  --profile P      webenv latency profile: none, web, async, fixed:200ms, ... (default web)
  --executors N    executors (default 8)
  --browsers M     Chromium processes (default: one per 4 executors)
  --duration D     measured time per mode (default 60s: the web profile's heavy tail makes short runs noisy)
  --warmup W       warm-up per mode before measuring (default 10s)
  --min-ratio R    exit 1 when async/sync is below R (default 0: report only)
  --modes M        the modes to run, comma-separated (default async,sync); add
                   sync-step for the lock-step baseline whose episodes
                   restart independently (its ratio is printed too)
Flags: -brokers (default: embedded), -run-dir, the Kafka security flags (see asyncwebrl -help).
`

// errRolloutRatio is returned when async is not fast enough over sync.
type errRolloutRatio struct{ ratio, min float64 }

func (e errRolloutRatio) Error() string {
	return fmt.Sprintf("async/sync steps/s ratio %.2f is below --min-ratio %.2f", e.ratio, e.min)
}

func runBenchRollout(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-help" || args[0] == "--help" || args[0] == "-h") {
		fmt.Fprint(stdout, benchRolloutUsage)
		return nil
	}
	vals, rest, err := subFlags(args, []string{"profile", "executors", "browsers", "duration", "warmup", "min-ratio", "modes"}, nil)
	if err != nil {
		return usageError{err}
	}
	profile, executors, browsers := "web", 8, 0
	duration, warmup, minRatio := 60*time.Second, 10*time.Second, 0.0
	if v, ok := vals["profile"]; ok {
		profile = v
	}
	for name, dst := range map[string]*int{"executors": &executors, "browsers": &browsers} {
		if v, ok := vals[name]; ok {
			if *dst, err = strconv.Atoi(v); err != nil || *dst < 1 {
				return usageError{fmt.Errorf("invalid --%s %q: want a positive integer", name, v)}
			}
		}
	}
	for name, dst := range map[string]*time.Duration{"duration": &duration, "warmup": &warmup} {
		if v, ok := vals[name]; ok {
			if *dst, err = time.ParseDuration(v); err != nil || *dst < 0 || (name == "duration" && *dst == 0) {
				return usageError{fmt.Errorf("invalid --%s %q: want a positive duration like 30s", name, v)}
			}
		}
	}
	if v, ok := vals["min-ratio"]; ok {
		if minRatio, err = strconv.ParseFloat(v, 64); err != nil || minRatio < 0 {
			return usageError{fmt.Errorf("invalid --min-ratio %q: want a non-negative number", v)}
		}
	}
	modes := []actor.Mode{actor.ModeAsync, actor.ModeSync}
	if v, ok := vals["modes"]; ok {
		modes = modes[:0]
		for _, m := range strings.Split(v, ",") {
			mode, err := actor.ParseMode(strings.TrimSpace(m))
			if err != nil {
				return usageError{fmt.Errorf("invalid --modes %q: %w", v, err)}
			}
			if !slices.Contains(modes, mode) {
				modes = append(modes, mode)
			}
		}
	}
	if minRatio > 0 && (!slices.Contains(modes, actor.ModeAsync) || !slices.Contains(modes, actor.ModeSync)) {
		return usageError{fmt.Errorf("--min-ratio needs the async and sync modes in --modes")}
	}
	prof, err := webenv.ParseProfile(profile)
	if err != nil {
		return usageError{err}
	}
	// The embedded broker unless brokers are configured on purpose.
	if !brokersGiven(rest) {
		rest = append([]string{"-brokers=" + "embedded"}, rest...)
	}
	cfg, err := parse(rest, stdout)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	srv, err := webenv.New(webenv.WithProfile(prof), webenv.WithLogger(quiet))
	if err != nil {
		return err
	}
	if err := srv.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = srv.Stop(context.Background()) }()

	seeds := cfg.Brokers
	if cfg.Embedded() {
		emb, err := kafka.StartEmbedded()
		if err != nil {
			return err
		}
		defer emb.Close()
		seeds = emb.Seeds()
	}
	f := kafka.NewFactory(cfg, seeds, quiet)
	if err := f.Ping(ctx, 10*time.Second); err != nil {
		return err
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	cat := topics.New(topics.WithPrefix("bench_rollout_"+hex.EncodeToString(rnd[:])+"_"),
		topics.WithPartitions(int32(cfg.TopicPartitions)), topics.WithReplication(int16(cfg.TopicReplication)))
	admin, err := f.NewClient("bench-rollout-admin")
	if err != nil {
		return err
	}
	defer admin.Close()
	actx, cancel := context.WithTimeout(ctx, time.Minute)
	_, err = topics.Apply(actx, admin, cat)
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = kadm.NewClient(admin).DeleteTopics(dctx, cat.Names()...)
	}()

	wcfg := *cfg
	wcfg.WebenvURL = srv.URL()
	bflags, err := env.ParseBrowserFlags(cfg.Actor.BrowserFlags)
	if err != nil {
		return usageError{fmt.Errorf("invalid -browser-flags: %w", err)}
	}
	opts := []actor.Option{
		actor.WithExecutors(executors), actor.WithBrowsers(browsers), actor.WithWebenvURL(srv.URL()),
		actor.WithBrowserOptions(env.WithExecPath(cfg.Actor.BrowserPath)),
		actor.WithBrowserOptions(bflags...),
		actor.WithLogger(log.With("bench", "rollout")),
	}
	fmt.Fprintf(stdout, "bench rollout: profile %s, %d executors, %s measured per mode after %s warm-up, %d cores, broker %s\n",
		prof.Name, executors, duration, warmup, runtime.NumCPU(), strings.Join(cfg.Brokers, ","))
	var runs []actor.BenchRun
	for _, mode := range modes {
		bc := actor.BenchConfig{Config: &wcfg, Factory: f, Catalog: cat, Warmup: warmup, Duration: duration,
			Options: append(slices.Clone(opts), actor.WithInstanceID("bench-"+string(mode)), actor.WithTaskGroup(cat.Prefix+"bench-"+string(mode)))}
		r, err := actor.BenchMode(ctx, bc, mode)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tsteps/s\ttraj/h\tcpu\tsteps\tepisodes\taborted\tunstable obs\tmean batch\tobserve\tthink\tact\twait\tidle\t")
	for _, r := range runs {
		sh := func(d time.Duration) string {
			if t := r.Split.Total(); t > 0 {
				return fmt.Sprintf("%.0f%%", 100*d.Seconds()/t.Seconds())
			}
			return "-"
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.0f\t%.0f%%\t%d\t%d\t%d\t%d\t%.2f\t%s\t%s\t%s\t%s\t%s\t\n", r.Mode, r.StepsPerSec(), r.TrajPerHour(), 100*r.CPUUtil(),
			r.Steps, r.Episodes, r.Aborted, r.Unstable, r.MeanBatch(),
			sh(r.Split.Observe), sh(r.Split.Think), sh(r.Split.Act), sh(r.Split.Wait), sh(r.Split.Idle))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rate := map[actor.Mode]float64{}
	for _, r := range runs {
		rate[r.Mode] = r.StepsPerSec()
	}
	async, ok := rate[actor.ModeAsync]
	if !ok {
		return nil
	}
	ratio := 0.0
	for _, base := range []actor.Mode{actor.ModeSync, actor.ModeSyncStep} {
		b, ok := rate[base]
		if !ok {
			continue
		}
		r := 0.0
		if b > 0 {
			r = async / b
		}
		if base == actor.ModeSync {
			ratio = r
			fmt.Fprintf(stdout, "ratio async/sync steps/s: %.2f (min %.2f)\n", r, minRatio)
		} else {
			fmt.Fprintf(stdout, "ratio async/%s steps/s: %.2f\n", base, r)
		}
	}
	if ratio < minRatio {
		return errRolloutRatio{ratio, minRatio}
	}
	return nil
}

// brokersGiven reports whether -brokers is on the command line or in the
// environment.
func brokersGiven(args []string) bool {
	if os.Getenv("ASYNCWEBRL_BROKERS") != "" {
		return true
	}
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "brokers" {
			return true
		}
	}
	return false
}
