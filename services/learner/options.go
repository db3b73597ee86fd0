package learner

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// Option configures a Service.
type Option func(*options)

type options struct {
	log        *slog.Logger
	reg        prometheus.Registerer
	policyName string
	group      string
	instance   string
	arch       policy.Architecture
	hyper      Hyper
	sampling   Sampling
	batchSize  int
	capacity   int
	replayRat  float64
	maxUses    int
	minReplay  int
	publishK   int
	gamma      float64
	groupSize  int
	maxLag     uint64
	maxStale   float64
	bcUpdates  int
	demoMix    float64
	// frozen: schedule and ingest, never train (WithTraining).
	frozen bool
	// lm: train a language model (WithLanguageModel).
	lm      *LMConfig
	ckptDir string
	// keepEvery: WithKeepCheckpoints.
	keepEvery uint64
	// seed: the seed of the fresh initialisation and replay sampling (default 1).
	seed       uint64
	curriculum *CurriculumConfig
	openTTL    time.Duration
	syncBatch  int
	// trainCore: the core the training thread owns (-1: none).
	trainCore int

	// leaseGroup: the consumer group whose holder of the lease topic's
	// partition leads the policy (default: the catalog prefix +
	// "learner-lease-" + the policy name). Learners of one policy share it.
	leaseGroup   string
	leaseTimeout time.Duration
}

func defaultOptions() options {
	return options{
		log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		reg:        prometheus.NewRegistry(),
		policyName: "default",
		instance:   "learner",
		trainCore:  -1,
		arch:       policy.DefaultArchitecture(),
		hyper:      DefaultHyper(),
		sampling:   FIFO,
		batchSize:  64,
		capacity:   4096,
		replayRat:  8,
		maxUses:    8,
		minReplay:  128,
		publishK:   10,
		gamma:      0.95,
		groupSize:  4,
		bcUpdates:  300,
		demoMix:    0.25,
		seed:       1,
		openTTL:    2 * time.Minute,

		leaseTimeout: 6 * time.Second,
	}
}

func (o *options) validate() error {
	switch {
	case o.syncBatch < 0:
		return fmt.Errorf("invalid sync batch %d episodes: want 0 (asynchronous) or more", o.syncBatch)
	case o.batchSize < 1 || o.batchSize > 4096:
		return fmt.Errorf("invalid learner batch size %d: want 1..4096", o.batchSize)
	case o.capacity < o.batchSize:
		return fmt.Errorf("invalid replay capacity %d: want at least the batch size %d", o.capacity, o.batchSize)
	case o.publishK < 1:
		return fmt.Errorf("invalid publish interval %d updates: want at least 1", o.publishK)
	case o.gamma <= 0 || o.gamma > 1:
		return fmt.Errorf("invalid discount %v: want (0, 1]", o.gamma)
	case o.maxStale < 0:
		return fmt.Errorf("invalid max staleness %v versions: want 0 (off) or more", o.maxStale)
	case o.demoMix < 0 || o.demoMix > 1:
		return fmt.Errorf("invalid demonstration mix %v: want 0..1 of the batch size", o.demoMix)
	case o.replayRat <= 0:
		return fmt.Errorf("invalid replay ratio %v: want > 0", o.replayRat)
	case o.hyper.LR <= 0:
		return fmt.Errorf("invalid learning rate %v: want > 0", o.hyper.LR)
	case o.groupSize < 2 && o.hyper.Algo.Grouped():
		return fmt.Errorf("invalid GRPO group size %d: want at least 2", o.groupSize)
	case o.policyName == "":
		return fmt.Errorf("invalid policy name: empty")
	case o.leaseTimeout < time.Second:
		return fmt.Errorf("invalid lease timeout %s: want at least 1s", o.leaseTimeout)
	}
	if _, err := ParseAlgo(string(o.hyper.Algo)); err != nil {
		return err
	}
	return o.arch.Validate()
}

// WithSyncBatches makes the learner the learner of the classic on-policy
// loop (default 0: asynchronous, it trains whenever its replay allows): it
// waits until n episodes acted with its newest version have arrived (the
// actors' batch: actor.WithOnPolicy), trains on exactly those, with as many
// minibatch updates as the replay ratio gives them, publishes the next
// version at once, and waits again. A batch short of episodes (one aborted
// by a dead browser) is trained on 20 s after its last arrival.
func WithSyncBatches(n int) Option { return func(o *options) { o.syncBatch = n } }

// WithArchitecture is the network of a fresh start (default
// policy.DefaultArchitecture, every action type): `-action-set` picks the
// types. A checkpoint or published weights carry their own.
func WithArchitecture(a policy.Architecture) Option { return func(o *options) { o.arch = a } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithMetrics registers the learner's metrics on reg (default: a private
// registry).
func WithMetrics(reg prometheus.Registerer) Option { return func(o *options) { o.reg = reg } }

// WithPolicyName sets the policy trained and published, the weights topic's
// key (default "default").
func WithPolicyName(n string) Option { return func(o *options) { o.policyName = n } }

// WithGroup sets the consumer group on the transitions topic (default: the
// catalog prefix + "learner").
func WithGroup(g string) Option { return func(o *options) { o.group = g } }

// WithInstanceID names this process in events (default "learner").
func WithInstanceID(id string) Option { return func(o *options) { o.instance = id } }

// WithHyper sets the optimisation settings (default DefaultHyper: PPO).
func WithHyper(h Hyper) Option { return func(o *options) { o.hyper = h } }

// WithTrainCore pins the training thread (and libtorch's threads, which it
// starts) to core (default -1: not pinned). The rest of the process keeps
// off it when the assembly called cpuset.Reserve.
func WithTrainCore(core int) Option { return func(o *options) { o.trainCore = core } }

// WithSampling picks FIFO or prioritized replay (default FIFO); batches are
// task-balanced either way.
func WithSampling(s Sampling) Option { return func(o *options) { o.sampling = s } }

// WithSeed seeds the fresh initialisation and the replay's draws (default
// 1, policy.InitSeed: the actors' version 0 must be seeded alike).
func WithSeed(seed uint64) Option { return func(o *options) { o.seed = seed } }

// WithBatchSize sets the samples per update (default 64).
func WithBatchSize(n int) Option { return func(o *options) { o.batchSize = n } }

// WithReplayRatio sets how many times, on average, each ingested sample is
// trained on (default 8): updates are paced by experience, so the learner
// never spins on stale data while actors are slow.
func WithReplayRatio(r float64) Option { return func(o *options) { o.replayRat = r } }

// WithMinReplay sets the samples needed before the first policy-gradient
// update (default 128).
func WithMinReplay(n int) Option { return func(o *options) { o.minReplay = n } }

// WithPublishEvery publishes weights every k updates (default 10).
func WithPublishEvery(k int) Option { return func(o *options) { o.publishK = k } }

// WithGroupSize sets GRPO's episodes per group (default 4); the curriculum
// issues groups of this size.
func WithGroupSize(n int) Option { return func(o *options) { o.groupSize = n } }

// WithMaxPolicyLag drops samples whose policy version is more than lag
// behind the newest version (default 0: off): on arrival, and from the
// replay as versions advance.
func WithMaxPolicyLag(lag uint64) Option { return func(o *options) { o.maxLag = lag } }

// WithMaxStaleness bounds how far the rollout may run ahead of training
// (default 0: off): with a curriculum, the scheduler issues no assignment
// while the learner owes more than eta versions of updates (publish-every
// updates each) to samples it already holds, by its replay ratio. This is
// AReaL's staleness bound η, placed where the learner's backlog is known:
// actors that share the learner's cores wait instead of producing data the
// learner can only train on many versions late (ARCHITECTURE.md, "staleness
// bound"). The on-policy loop (WithSyncBatches) ignores it.
func WithMaxStaleness(eta float64) Option { return func(o *options) { o.maxStale = eta } }

// WithBCUpdates sets the behaviour-cloning warm start: this many updates on
// demonstrations (source = SOURCE_DEMO) before policy-gradient training
// starts, when demonstrations arrive (default 300; 0 turns cloning off).
func WithBCUpdates(n int) Option { return func(o *options) { o.bcUpdates = n } }

// WithTraining turns training on (the default) or off. Off, the learner
// still schedules tasks (the curriculum, the held-out evaluation episodes,
// the demonstrations) and ingests transitions, but never updates nor
// publishes weights: the actors' policy is not one it can train (the
// openai backend's model lives in its server).
func WithTraining(on bool) Option { return func(o *options) { o.frozen = !on } }

// WithDemoMix adds demonstrations to every policy-gradient update (of the
// async loop and of the sync loop's minibatches alike) after the
// warm start: round(share × batch size) demonstration samples, trained by
// the behaviour-cloning loss beside the batch's policy-gradient samples
// (default 0.25; 0 turns it off; nothing changes while no demonstration
// arrived).
func WithDemoMix(share float64) Option { return func(o *options) { o.demoMix = share } }

// WithCheckpointDir keeps checkpoints in dir (default: none).
func WithCheckpointDir(dir string) Option { return func(o *options) { o.ckptDir = dir } }

// WithKeepCheckpoints keeps every n-th version's model in the checkpoint
// dir beside the newest (default 0: the newest alone), for
// CheckpointModel: the compacted weights topic soon holds the newest
// version alone.
func WithKeepCheckpoints(n uint64) Option { return func(o *options) { o.keepEvery = n } }

// WithCurriculum runs the task scheduler inside the learner (default: off).
func WithCurriculum(c CurriculumConfig) Option { return func(o *options) { o.curriculum = &c } }

// WithLeaseTimeout sets the session timeout of the lease group and of the
// transitions group (default 6s, the broker's smallest by default): a
// killed leader's standby takes over this long after the leader's last
// heartbeat.
func WithLeaseTimeout(d time.Duration) Option { return func(o *options) { o.leaseTimeout = d } }
