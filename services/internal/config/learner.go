package config

import (
	"flag"
	"fmt"
	"runtime"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// Learner configures the learner target and its task scheduler.
type Learner struct {
	// Algo is ppo, reinforce or grpo.
	Algo string
	// GRPONorm is how GRPO weighs an episode's steps: step or trajectory.
	GRPONorm string
	// Core is the core the training thread owns, the rest of the process
	// kept off it (-1: none).
	Core int
	// Replay is fifo, prioritized or epochs.
	Replay       string
	BatchSize    int
	ReplayRatio  float64
	LR           float64
	PublishEvery int
	GroupSize    int
	MaxPolicyLag uint64
	// MaxStaleness holds the scheduler's assignments back while the
	// learner owes more than this many versions of updates (0: off).
	MaxStaleness float64
	// Demos is the number of oracle demonstration episodes the scheduler
	// issues first for the behaviour-cloning warm start (0: no warm start).
	Demos     int
	BCUpdates int
	// Families restricts the curriculum to these task families, comma-
	// separated ("" all the suite's schedulable ones).
	Families string
	// DemoMix is the share of each policy-gradient batch drawn from the
	// demonstrations after the warm start.
	DemoMix float64
	// Curriculum runs the task scheduler inside the learner.
	Curriculum bool
	// InFlight bounds the scheduler's outstanding assignments.
	InFlight int
	// MaxTier is the hardest tier scheduled: easy, medium or hard.
	MaxTier string
	// CurriculumFocus is what the scheduler's draw of a family favours:
	// failure (its recent failures) or spread (its groups' disagreement,
	// p(1-p) of its recent success).
	CurriculumFocus string
	// EvalFraction of assignments are greedy evaluation episodes on the
	// held-out sites.
	EvalFraction float64
	// LeaseTimeout is how long after a leading learner's last heartbeat a
	// standby of the same policy takes over.
	LeaseTimeout time.Duration
	// KeepCheckpointEvery keeps every n-th version's model in the
	// learner's checkpoint dir beside the newest (0: the newest alone),
	// for replay eval --version once the compacted topic lost it.
	KeepCheckpointEvery int
}

// Run configures the main job.
type Run struct {
	// Duration stops the process after this long (0: run until a signal).
	Duration time.Duration
	// ReportEvery is the progress line interval of the reporter target.
	ReportEvery time.Duration
}

func (l *Learner) register(fs *flag.FlagSet) {
	fs.StringVar(&l.Algo, "algo", "ppo", "learner: ppo or grpo (their clip anchored on a proximal policy, the stored behaviour log-prob weighing the sample: AReaL's decoupled objective), ppo-plain or grpo-plain (clipped against the behaviour log-prob), or reinforce (env "+envName("algo")+")")
	fs.StringVar(&l.GRPONorm, "grpo-norm", "step", "learner: GRPO's weight of a step: step (every step alike, the constant 1/k AsyncWebRL uses: a long episode counts for its steps) or trajectory (1/|episode|: every episode alike, as GRPO's first form) (env "+envName("grpo-norm")+")")
	fs.IntVar(&l.Core, "learner-core", -1, "learner: the core its training thread owns, every other thread of the process (actors, browsers) pinned to the other cores, in async and sync runs alike; -1 = off (env "+envName("learner-core")+")")
	fs.StringVar(&l.Replay, "replay", "fifo", "learner: replay sampling: fifo or prioritized (task-balanced draws), or epochs (each arriving sample used replay-ratio times in shuffled minibatches, as the on-policy learner) (env "+envName("replay")+")")
	fs.IntVar(&l.BatchSize, "batch-size", 64, "learner: samples per update (env "+envName("batch-size")+")")
	fs.Float64Var(&l.ReplayRatio, "replay-ratio", 8, "learner: average times each sample is trained on; paces updates by experience (env "+envName("replay-ratio")+")")
	fs.Float64Var(&l.LR, "lr", 1e-3, "learner: Adam learning rate (env "+envName("lr")+")")
	fs.IntVar(&l.PublishEvery, "publish-every", 10, "learner: publish weights every K updates (env "+envName("publish-every")+")")
	fs.IntVar(&l.GroupSize, "group-size", 4, "learner: GRPO episodes per group of one task seed (env "+envName("group-size")+")")
	fs.Uint64Var(&l.MaxPolicyLag, "max-policy-lag", 0, "learner: drop samples more than this many versions old; 0 = off (env "+envName("max-policy-lag")+")")
	fs.Float64Var(&l.MaxStaleness, "max-staleness", 0, "learner: the scheduler holds tasks back while the learner owes more than this many versions of updates to samples it holds (AReaL's staleness bound); 0 = off (env "+envName("max-staleness")+")")
	fs.IntVar(&l.Demos, "demos", 0, "learner: oracle demonstration episodes to schedule first for the behaviour-cloning warm start; 0 = none (env "+envName("demos")+")")
	fs.IntVar(&l.BCUpdates, "bc-updates", 300, "learner: behaviour-cloning updates on demonstrations before RL (env "+envName("bc-updates")+")")
	fs.Float64Var(&l.DemoMix, "demo-mix", 0.25, "learner: after the warm start, demonstrations added to each policy-gradient batch, as a share of the batch size, with the behaviour-cloning loss; 0 = off (env "+envName("demo-mix")+")")
	fs.BoolVar(&l.Curriculum, "curriculum", true, "learner: publish tasks from easy to hard by recent success (env "+envName("curriculum")+")")
	fs.IntVar(&l.InFlight, "in-flight", 16, "learner: scheduled tasks outstanding at once (env "+envName("in-flight")+")")
	fs.StringVar(&l.Families, "families", "", "learner: the task families the curriculum schedules, comma-separated (e.g. miniwob/click-checkboxes-large,miniwob/email-inbox); \"\" = every family of the suite the policy can express (env "+envName("families")+")")
	fs.StringVar(&l.CurriculumFocus, "curriculum-focus", "failure", "learner: what a family's draw weight follows on a suite with MiniWoB++ (the built-in suite draws uniformly): failure (1 + 3 x its recent failure rate, a stuck one drawn less) or spread (0.25 + 15 x p(1-p) of its recent success p, 4 at 50% and for a family not yet tried: GRPO learns only from groups whose episodes disagree, so a solved or hopeless family is drawn 1/16 as often as one at 50%) (env "+envName("curriculum-focus")+")")
	fs.StringVar(&l.MaxTier, "max-tier", "hard", "learner: hardest tier scheduled: easy, medium or hard (env "+envName("max-tier")+")")
	fs.IntVar(&l.KeepCheckpointEvery, "keep-checkpoint-every", 0, "learner: keep every n-th version's model in <run-dir>/learner/<prefix><policy> beside the newest, for replay eval --version after the compacted weights topic dropped it (an lm version is ~52 MB on disk); 0 = the newest alone (env "+envName("keep-checkpoint-every")+")")
	fs.DurationVar(&l.LeaseTimeout, "lease-timeout", 6*time.Second, "learner: a standby learner of the policy takes over this long after the leader's last heartbeat; at least the broker's group.min.session.timeout.ms (env "+envName("lease-timeout")+")")
	fs.Float64Var(&l.EvalFraction, "eval-fraction", 0.2, "learner: fraction of tasks run greedily on held-out sites (env "+envName("eval-fraction")+")")
}

// Algos and Samplings are the values of -algo and -replay: learner.Algos and
// learner.Samplings, which a learner test holds them to (config is a leaf
// and cannot import the learner).
var (
	Algos     = []string{"ppo", "ppo-plain", "reinforce", "grpo", "grpo-plain"}
	Samplings = []string{"fifo", "prioritized", "epochs"}
)

func (l *Learner) validate() error {
	if n := runtime.NumCPU(); l.Core < -1 || l.Core >= n || l.Core >= 0 && n < 2 {
		return fmt.Errorf("invalid -learner-core %d: want -1 (off) or a core 0..%d of a machine with at least 2", l.Core, n-1)
	}
	if l.CurriculumFocus != "" {
		if err := oneOf("-curriculum-focus", l.CurriculumFocus, "failure", "spread"); err != nil {
			return err
		}
	}
	if l.GRPONorm != "" {
		if err := oneOf("-grpo-norm", l.GRPONorm, "step", "trajectory"); err != nil {
			return err
		}
	}
	if l.Algo != "" {
		if err := oneOf("-algo", l.Algo, Algos...); err != nil {
			return err
		}
	}
	if l.Replay != "" {
		if err := oneOf("-replay", l.Replay, Samplings...); err != nil {
			return err
		}
	}
	if l.MaxTier != "" {
		if _, err := catalog.ParseTier(l.MaxTier); err != nil {
			return fmt.Errorf("invalid -max-tier: %w", err)
		}
	}
	switch {
	case l.BatchSize < 0 || l.BatchSize > 4096:
		return fmt.Errorf("invalid -batch-size %d: want 1..4096", l.BatchSize)
	case l.ReplayRatio < 0:
		return fmt.Errorf("invalid -replay-ratio %v: want > 0", l.ReplayRatio)
	case l.LR < 0:
		return fmt.Errorf("invalid -lr %v: want > 0", l.LR)
	case l.KeepCheckpointEvery < 0:
		return fmt.Errorf("invalid -keep-checkpoint-every %d: want 0 (the newest alone) or more", l.KeepCheckpointEvery)
	case l.PublishEvery < 0:
		return fmt.Errorf("invalid -publish-every %d: want >= 1", l.PublishEvery)
	case l.DemoMix < 0 || l.DemoMix > 1:
		return fmt.Errorf("invalid -demo-mix %g: want 0..1", l.DemoMix)
	case l.Demos < 0:
		return fmt.Errorf("invalid -demos %d: want >= 0", l.Demos)
	case l.EvalFraction < 0 || l.EvalFraction >= 1:
		return fmt.Errorf("invalid -eval-fraction %v: want [0, 1)", l.EvalFraction)
	case l.LeaseTimeout != 0 && l.LeaseTimeout < time.Second:
		return fmt.Errorf("invalid -lease-timeout %s: want at least 1s", l.LeaseTimeout)
	}
	return nil
}

func (r *Run) register(fs *flag.FlagSet) {
	fs.DurationVar(&r.Duration, "duration", 0, "stop after this long, as on SIGTERM; 0 = run until a signal (env "+envName("duration")+")")
	fs.DurationVar(&r.ReportEvery, "report-every", 15*time.Second, "reporter: progress line interval (env "+envName("report-every")+")")
}
