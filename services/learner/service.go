package learner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/cpuset"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/omp"
	"github.com/asyncwebrl/asyncwebrl/services/internal/weightstopic"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Service is the learner target (app.Service): a consumer group member on
// the transitions topic that feeds a replay buffer, one torch thread that
// trains on it, and a publisher of weights versions.
type Service struct {
	cfg     *config.Config
	factory *kafka.Factory
	catalog *topics.Catalog
	o       options
	log     *slog.Logger
	m       *metrics

	producer *kgo.Client // dead letters and the curriculum's tasks
	consumer *kgo.Client
	weights  *weightsProducer // versions, in transactions (leader only)

	// Leadership: the lease, and while standing by, the wait for it.
	lease         *lease
	standbyCancel context.CancelFunc
	standbyDone   chan struct{}

	replay *replay
	demos  *replay
	asm    *assembler
	sync   *syncBatch // the on-policy loop's batch (WithSyncBatches), or nil

	// state shared with the torch thread
	version   atomic.Uint64 // newest published
	updates   atomic.Int64
	ingested  atomic.Int64 // policy samples released to the replay
	demoIn    atomic.Int64
	bcDone    atomic.Bool
	rlDone    atomic.Int64 // policy-gradient updates (the torch thread adds)
	rounds    atomic.Int64 // minibatches left of the Epochs round under way
	evictedAt uint64       // the version the replay was last evicted for; torch thread only

	arch   policy.Architecture
	params policy.Params // initial parameters, handed to the torch thread

	cur *curriculum
	lm  *lmMode // WithLanguageModel, or nil

	cancel context.CancelFunc
	wg     sync.WaitGroup
	failed chan error
	once   sync.Once

	quiesceOnce sync.Once
	quiesceErr  error

	statsMu sync.Mutex
	last    stepStats
}

var (
	_ app.Service  = (*Service)(nil)
	_ app.Failer   = (*Service)(nil)
	_ app.Producer = (*Service)(nil)
)

// New builds a learner; Start connects and begins training.
func New(cfg *config.Config, f *kafka.Factory, cat *topics.Catalog, opts ...Option) (*Service, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if o.group == "" {
		o.group = cat.Prefix + "learner"
	}
	if o.leaseGroup == "" {
		o.leaseGroup = cat.Prefix + "learner-lease-" + o.policyName
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.lm != nil && !o.hyper.Algo.Grouped() {
		// The language model has no critic: its advantages are the
		// group's. The ratio stays as asked: ppo's decoupled, the others'
		// plain.
		algo := GRPOPlain
		if o.hyper.Algo.Decoupled() {
			algo = GRPO
		}
		o.log.Info("language model: training with "+string(algo)+", the model has no value head", "algo_asked", o.hyper.Algo)
		o.hyper.Algo = algo
	}
	if o.lm != nil {
		// Refused at the start, not at the first publish minutes in:
		// every version of the run weighs the same.
		if n := o.lm.versionBytes(); n > weightsMaxBytes {
			return nil, fmt.Errorf("unable to train %d blocks of %s: %w", o.lm.TrainBlocks, o.lm.Model, &VersionTooLargeError{Bytes: n, Max: weightsMaxBytes})
		}
	}
	if o.lm != nil && o.minReplay > 2*o.batchSize {
		// A language model's step takes seconds to act: 128 of them
		// before the first update is minutes of a run; two batches do.
		o.minReplay = 2 * o.batchSize
	}
	m, err := newMetrics(o.reg)
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, factory: f, catalog: cat, o: o, log: o.log.With("service", "learner"), m: m,
		replay: newReplay(o.capacity, o.maxUses, o.sampling, o.seed),
		// Demonstrations are few and precious: kept until the warm start
		// is over, however often they were used.
		demos:  newReplay(max(o.capacity, 20000), 0, FIFO, o.seed+1),
		asm:    newAssembler(o.gamma, o.hyper.Algo.Grouped(), o.groupSize, o.openTTL),
		failed: make(chan error, 1),
	}
	if o.syncBatch > 0 {
		s.sync = newSyncBatch(o.syncBatch)
	}
	if o.lm != nil {
		s.lm = newLMMode(*o.lm)
	}
	if o.curriculum != nil {
		c := *o.curriculum
		if o.hyper.Algo.Grouped() && c.GroupSize == 0 {
			c.GroupSize = o.groupSize
		}
		if s.cur, err = newCurriculum(c, s.log); err != nil {
			return nil, err
		}
		if o.maxStale > 0 && s.sync == nil {
			// The on-policy loop is its own bound: its actors wait for
			// every version, and its updates are not paced by the ratio.
			s.cur.hold = func() bool { return s.behind() > o.maxStale }
			s.cur.maxHold = maxHold
		}
	}
	return s, nil
}

// Name implements app.Service.
func (s *Service) Name() string { return "learner" }

// Failed implements app.Failer.
func (s *Service) Failed() <-chan error { return s.failed }

func (s *Service) fail(err error) {
	s.once.Do(func() { s.failed <- err })
}

// Version is the newest published version.
func (s *Service) Version() uint64 { return s.version.Load() }

// maxHold is the longest the staleness bound holds tasks back at a time,
// well under the actors' task pause (30 s by default), after which they
// would run local tasks: a learner that cannot catch up within it (its
// first versions, a slow machine) gets a round of tasks and holds again.
const maxHold = 10 * time.Second

// leaseJoinTimeout bounds Start's wait for the lease group's first
// assignment. A group whose previous leader was killed answers after that
// leader's session timeout.
const leaseJoinTimeout = time.Minute

// Start implements app.Service: it joins the policy's lease group. The
// leader (the member holding the lease) resumes from the newest of the
// checkpoint and the weights topic (or a fresh initialisation), then starts
// consuming, training and, when configured, scheduling tasks, all before
// Start returns. A standby returns at once, does nothing but hold its place
// in the group, and takes over the same way when the group gives it the
// lease (the leader stopped, or was killed: after its session timeout).
func (s *Service) Start(ctx context.Context) (err error) {
	if s.lease, err = newLease(s.factory, s.o.leaseGroup, s.catalog.Name(topics.LearnerLease), s.o.leaseTimeout, s.log); err != nil {
		return err
	}
	s.lease.onChange = func(from, to leaseState) {
		s.m.leaseChanges.WithLabelValues(to.String()).Inc()
		switch {
		case to == leaseUncertain, to == leaseLost:
			s.m.leader.Set(0)
		case to == leaseHeld && from == leaseUncertain:
			s.m.leader.Set(1)
		}
	}
	defer func() {
		if err != nil && s.lease != nil {
			s.lease.close()
			s.lease = nil
		}
	}()
	if err := s.lease.waitSettled(ctx, leaseJoinTimeout); err != nil {
		return err
	}
	if s.lease.leads() {
		return s.lead(ctx)
	}
	s.m.leader.Set(0)
	s.log.Info("learner standing by: another learner leads the policy; this one takes over when it goes",
		"policy", s.o.policyName, "lease_group", s.o.leaseGroup, "session_timeout", s.o.leaseTimeout)
	sctx, cancel := context.WithCancel(context.Background())
	s.standbyCancel, s.standbyDone = cancel, make(chan struct{})
	go s.standBy(sctx)
	return nil
}

// standBy waits for the lease and takes over with it.
func (s *Service) standBy(ctx context.Context) {
	defer close(s.standbyDone)
	select {
	case <-ctx.Done():
		return
	case <-s.lease.acquired:
	}
	t0 := time.Now()
	s.log.Info("learner lease acquired; taking over", "policy", s.o.policyName)
	if err := s.lead(ctx); err != nil {
		if ctx.Err() == nil {
			s.fail(fmt.Errorf("unable to take over as the leading learner: %w", err))
		}
		return
	}
	s.log.Info("learner took over", "policy", s.o.policyName, "version", s.version.Load(), "took", time.Since(t0).Round(time.Millisecond))
}

// lead makes this learner the policy's publisher: it claims the weights
// producer (fencing every earlier one), resumes from the newest committed
// version, then consumes, trains and schedules.
func (s *Service) lead(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			s.closeWork()
		}
	}()
	if s.weights, err = claimWeights(ctx, s.factory, "learner-publish", weightsTxnID(s.catalog.Prefix, s.o.policyName), s.log); err != nil {
		return err
	}
	s.weights.onSettled = func(outcome string) { s.m.settled.WithLabelValues(outcome).Inc() }
	if s.producer, err = s.factory.NewClient("learner",
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.ZstdCompression()),
		kgo.ProducerBatchMaxBytes(weightsMaxBytes),
		kgo.ProducerLinger(5*time.Millisecond),
	); err != nil {
		return err
	}
	if err := s.resume(ctx); err != nil {
		return err
	}
	if s.consumer, err = s.factory.NewClient("learner-transitions",
		kgo.ConsumerGroup(s.o.group),
		kgo.ConsumeTopics(s.catalog.Name(topics.Transitions)),
		// The joiner writes in transactions: an aborted batch is
		// written again, and must be read once.
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(64<<20),
		kgo.AutoCommitMarks(),
		kgo.AutoCommitInterval(time.Second),
		// The lease's session: a leader that took over after a kill -9
		// joins a group the dead leader is still a member of, and its
		// join waits until that member's session ran out.
		kgo.SessionTimeout(s.o.leaseTimeout),
		kgo.HeartbeatInterval(max(s.o.leaseTimeout/6, 100*time.Millisecond)),
	); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel

	ready := make(chan error, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := onTorchThread(func() error {
			if c := s.o.trainCore; c >= 0 {
				if err := cpuset.Own(c); err != nil {
					return err
				}
				// One core, one thread: libtorch's and OpenBLAS's
				// OpenMP workers would share it (doc.go of omp).
				omp.SetThreads(1)
				s.log.Info("training thread pinned", "core", c, "math_threads", omp.Threads())
			}
			return s.train(runCtx, ready)
		})
		select {
		case ready <- err: // failed before it was ready
		default:
		}
		if err != nil && runCtx.Err() == nil {
			if errors.Is(err, errFenced) {
				s.log.Error("learner fenced: a newer learner publishes this policy; this one stops publishing and exits",
					"policy", s.o.policyName, "version", s.version.Load(), "err", err)
			}
			s.fail(fmt.Errorf("learner training stopped: %w", err))
		}
	}()
	if err := <-ready; err != nil {
		cancel()
		s.wg.Wait()
		return err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.consume(runCtx); err != nil {
			s.fail(fmt.Errorf("learner stopped consuming transitions: %w", err))
		}
	}()
	if s.cur != nil {
		if err := s.cur.start(ctx, s.factory, s.catalog, s.producer, s.o.instance, s.fail); err != nil {
			cancel()
			s.wg.Wait()
			return err
		}
	}
	if s.lease != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.watchLease(runCtx)
		}()
	}
	s.m.leader.Set(1)
	s.log.Info("learner running", "policy", s.o.policyName, "version", s.version.Load(), "algo", s.o.hyper.Algo,
		"sampling", s.o.sampling, "batch", s.o.batchSize, "publish_every", s.o.publishK, "group", s.o.group,
		"curriculum", s.cur != nil, "role", "leader")
	return nil
}

// watchLease stops a leader whose lease the group took away (its session
// expired: it was paused or cut off, and a standby may lead now). The
// fenced producer already keeps it from publishing; this stops the rest
// (training, tasks) without waiting for the next publish to find out.
func (s *Service) watchLease(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-s.lease.lost:
		s.log.Error("learner lost its lease: another learner may lead this policy now; this one stops",
			"policy", s.o.policyName, "lease_group", s.o.leaseGroup, "version", s.version.Load())
		s.fail(fmt.Errorf("unable to keep leading policy %q: the learner lease group took the lease away", s.o.policyName))
	}
}

// awaitLead returns once this learner holds the lease (at once without
// one, or while it holds it), errLeaseLost once another learner does: a
// leader whose lease is uncertain (its group session errored, a broker
// fault) publishes nothing until the group has answered.
func (s *Service) awaitLead(ctx context.Context) error {
	if s.lease == nil || s.lease.leads() {
		return nil
	}
	t0 := time.Now()
	s.log.Warn("publishing paused: the learner lease is uncertain until the lease group is joined again", "policy", s.o.policyName)
	if err := s.lease.awaitLead(ctx); err != nil {
		return err
	}
	s.log.Info("the learner lease is this learner's again; publishing resumes", "policy", s.o.policyName,
		"paused", time.Since(t0).Round(time.Millisecond))
	return nil
}

// leaseLost reports whether this leader's lease was taken away.
func (s *Service) leaseLost() bool {
	if s.lease == nil {
		return false
	}
	select {
	case <-s.lease.lost:
		return true
	default:
		return false
	}
}

// resume picks the starting parameters and version: the newest of the
// checkpoint and the weights topic. Weights are published before the
// checkpoint is written, so after a kill -9 the topic may be one version
// ahead; either way the next version is the newest seen + 1 and no version
// number is ever reused or skipped.
func (s *Service) resume(ctx context.Context) error {
	s.arch = s.o.arch
	s.params = s.arch.NewParams(s.o.seed)
	var from string = "fresh initialisation"
	if s.o.ckptDir != "" {
		c, onnx, ok, err := loadCheckpoint(s.o.ckptDir)
		if err != nil {
			return err
		}
		if ok && c.Policy == s.o.policyName {
			if err := s.adopt(onnx, c.Version); err != nil {
				return fmt.Errorf("unable to resume from checkpoint: %w", err)
			}
			s.updates.Store(c.Updates)
			s.bcDone.Store(c.BCDone)
			from = "checkpoint"
		}
	}
	ev, err := weightstopic.Latest(ctx, s.newClient("learner-weights"), s.catalog.Name(topics.Weights), s.o.policyName, s.log,
		func() { s.m.bad.WithLabelValues("weights").Inc() })
	if err != nil {
		return err
	}
	if ev != nil && ev.GetVersion() > s.version.Load() {
		if err := s.adopt(ev.GetOnnx(), ev.GetVersion()); err != nil {
			return fmt.Errorf("unable to resume from published version %d: %w", ev.GetVersion(), err)
		}
		s.updates.Store(max(s.updates.Load(), int64(ev.GetUpdates())))
		if ev.GetUpdates() > 0 {
			s.bcDone.Store(true)
		}
		from = "weights topic"
	}
	s.m.version.Set(float64(s.version.Load()))
	s.log.Info("learner state", "from", from, "version", s.version.Load(), "updates", s.updates.Load())
	return nil
}

// newClient returns a client constructor named name for weightstopic.
func (s *Service) newClient(name string) func(...kgo.Opt) (*kgo.Client, error) {
	return func(opts ...kgo.Opt) (*kgo.Client, error) { return s.factory.NewClient(name, opts...) }
}

// adopt takes parameters and version from a model (a language model's
// version: its tensors into the base model).
func (s *Service) adopt(onnx []byte, version uint64) error {
	if s.lm != nil {
		if err := s.lm.adopt(onnx); err != nil {
			return err
		}
		s.version.Store(version)
		return nil
	}
	m, err := policy.ReadONNX(onnx)
	if err != nil {
		return err
	}
	if !m.Arch.SameShapes(&s.o.arch) {
		s.log.Warn("resuming with the architecture of the saved model, not the configured one")
	}
	s.arch, s.params = m.Arch, m.Params
	s.version.Store(version)
	return nil
}

// StopProducing implements app.Producer: the curriculum stops publishing
// tasks, so the actors' input ends; consuming stops, the torch thread
// finishes its update and publishes what it has, and the output is flushed.
// All of that happens before the recorder drains, so the final version (and
// any dead letter) is recorded in the same run. Stop then only closes.
func (s *Service) StopProducing(ctx context.Context) error {
	s.quiesceOnce.Do(func() { s.quiesceErr = s.quiesce(ctx) })
	return s.quiesceErr
}

// Stop implements app.Service: what StopProducing does, if it has not run,
// then the clients close.
func (s *Service) Stop(ctx context.Context) error {
	err := s.StopProducing(ctx)
	s.closeClients()
	return err
}

// quiesce ends every producing part of the learner: the curriculum, the
// consumer and the torch thread (which publishes its last version), then
// commits and flushes.
func (s *Service) quiesce(ctx context.Context) error {
	var errs []error
	if s.standbyCancel != nil {
		// A standby stops waiting; a takeover under way ends first, so
		// what it started is stopped below.
		s.standbyCancel()
		<-s.standbyDone
	}
	if s.cur != nil {
		errs = append(errs, s.cur.stop(ctx))
	}
	if s.cancel != nil {
		s.cancel()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("unable to stop the learner in time: %w", ctx.Err()))
	}
	if s.consumer != nil {
		// Offsets of what reached the replay buffer.
		if err := s.consumer.CommitMarkedOffsets(ctx); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, fmt.Errorf("unable to commit the learner's offsets: %w", err))
		}
	}
	if s.producer != nil {
		if err := s.producer.Flush(ctx); err != nil {
			errs = append(errs, fmt.Errorf("unable to flush the learner's output: %w", err))
		}
	}
	return errors.Join(errs...)
}

// closeClients closes every client, the lease last.
func (s *Service) closeClients() {
	s.closeWork()
	// Last: while a stopping leader still holds the lease, no standby
	// takes over, and its final version is out before one does.
	if s.lease != nil {
		s.lease.close()
		s.lease = nil
	}
}

// closeWork closes the clients of a leader's work.
func (s *Service) closeWork() {
	if s.consumer != nil {
		s.consumer.CloseAllowingRebalance()
		s.consumer = nil
	}
	if s.producer != nil {
		s.producer.Close()
		s.producer = nil
	}
	if s.weights != nil {
		s.weights.close()
		s.weights = nil
	}
}

// publish exports the model to ONNX, publishes it as the next version and
// then checkpoints it. Torch thread only.
func (s *Service) publish(ctx context.Context, t stepper, st stepStats) error {
	if err := s.awaitLead(ctx); err != nil {
		return err
	}
	onnx, format, archJSON, sum, err := t.export()
	if err != nil {
		return err
	}
	parent := s.version.Load()
	v := parent + 1
	behind := s.behind()
	s.m.behind.Set(behind)
	now := time.Now()
	ev := &eventspb.Weights{
		Envelope:          eventspb.NewEnvelope(s.o.instance),
		PolicyName:        s.o.policyName,
		Version:           v,
		ParentVersion:     parent,
		Onnx:              onnx,
		Format:            format,
		OnnxSha256:        sum,
		Architecture:      archJSON,
		CreatedAtUnixNano: now.UnixNano(),
		Updates:           uint64(s.updates.Load()),
		Metrics: map[string]float64{
			"loss": st.Loss, "policy_loss": st.PolicyLoss, "value_loss": st.ValueLoss, "entropy": st.Entropy,
			"bc_loss": st.BCLoss, "clip_frac": st.ClipFrac, "approx_kl": st.ApproxKL, "ref_kl": st.RefKL,
			"behaviour_weight": st.BehaviourWeight, "behaviour_capped": st.BehaviourCapped,
			"staleness": st.Staleness, "max_staleness": st.MaxStaleness,
			"policy_samples": float64(st.Policy), "demo_in_batch": float64(st.Demo),
			"samples": float64(s.ingested.Load()), "demo_samples": float64(s.demoIn.Load()), "replay": float64(s.replay.len()),
			"versions_behind": behind,
		},
	}
	s.m.replaySamples.Set(float64(s.replay.len()))
	s.m.replayCapacity.Set(float64(s.o.capacity))
	s.m.replayBytes.Set(float64(s.replay.bytes()))
	b, err := eventspb.Marshal(ev)
	if err != nil {
		return err
	}
	if len(b) > weightsMaxBytes {
		return fmt.Errorf("unable to publish weights version %d: %w", v, &VersionTooLargeError{Bytes: len(b), Max: weightsMaxBytes})
	}
	rec := &kgo.Record{Topic: s.catalog.Name(topics.Weights), Key: []byte(s.o.policyName), Value: b}
	if err := s.weights.publishSettled(ctx, rec, ev, s.catalog.Name(topics.Weights), s.awaitLead); err != nil {
		return fmt.Errorf("unable to publish weights version %d: %w", v, err)
	}
	s.version.Store(v)
	s.m.version.Set(float64(v))
	s.m.published.Inc()
	if s.o.ckptDir != "" {
		c := checkpoint{Policy: s.o.policyName, Version: v, Updates: s.updates.Load(), Samples: s.ingested.Load(), BCDone: s.bcDone.Load(), SavedAt: now}
		if err := saveCheckpoint(s.o.ckptDir, c, onnx, s.o.keepEvery); err != nil {
			// The version is out; a failed checkpoint only costs the
			// topic read at the next start.
			s.log.Warn("unable to checkpoint", "version", v, "err", err)
		}
	}
	s.log.Info("weights published", "policy", s.o.policyName, "version", v, "updates", s.updates.Load(),
		"loss", round3(st.Loss), "entropy", round3(st.Entropy), "bc_loss", round3(st.BCLoss), "clip_frac", round3(st.ClipFrac),
		"samples", s.ingested.Load(), "demo_samples", s.demoIn.Load(), "replay", s.replay.len(), "bytes", len(onnx))
	return nil
}

func round3(x float64) float64 { return float64(int64(x*1000)) / 1000 }

// isHeldOut reports whether a task runs on a test site: its transitions
// evaluate the policy and are never trained on.
func isHeldOut(family, site string) bool {
	return catalog.SiteSplit(family, site) == catalog.SplitTest
}
