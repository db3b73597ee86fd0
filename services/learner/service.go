package learner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/weightstopic"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
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

	producer *kgo.Client
	consumer *kgo.Client

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
	rlUpdates int64 // torch thread only

	arch   policy.Architecture
	params policy.Params // initial parameters, handed to the torch thread

	cur *curriculum

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
	if err := o.validate(); err != nil {
		return nil, err
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
		asm:    newAssembler(o.gamma, o.hyper.Algo == GRPO, o.groupSize, o.openTTL),
		failed: make(chan error, 1),
	}
	if o.syncBatch > 0 {
		s.sync = newSyncBatch(o.syncBatch)
	}
	if o.curriculum != nil {
		c := *o.curriculum
		if o.hyper.Algo == GRPO && c.GroupSize == 0 {
			c.GroupSize = o.groupSize
		}
		if s.cur, err = newCurriculum(c, s.log); err != nil {
			return nil, err
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

// Start implements app.Service: it resumes from the newest of the
// checkpoint and the weights topic (or a fresh initialisation), then starts
// consuming, training and, when configured, scheduling tasks.
func (s *Service) Start(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			s.closeClients()
		}
	}()
	if s.producer, err = s.factory.NewClient("learner",
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.ZstdCompression()),
		kgo.ProducerBatchMaxBytes(32<<20),
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
	); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel

	ready := make(chan error, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := onTorchThread(func() error { return s.train(runCtx, ready) })
		select {
		case ready <- err: // failed before it was ready
		default:
		}
		if err != nil && runCtx.Err() == nil {
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
		s.consume(runCtx)
	}()
	if s.cur != nil {
		if err := s.cur.start(ctx, s.factory, s.catalog, s.producer, s.o.instance); err != nil {
			cancel()
			s.wg.Wait()
			return err
		}
	}
	s.log.Info("learner running", "policy", s.o.policyName, "version", s.version.Load(), "algo", s.o.hyper.Algo,
		"sampling", s.o.sampling, "batch", s.o.batchSize, "publish_every", s.o.publishK, "group", s.o.group,
		"curriculum", s.cur != nil)
	return nil
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

// adopt takes parameters and version from a model.
func (s *Service) adopt(onnx []byte, version uint64) error {
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

func (s *Service) closeClients() {
	if s.consumer != nil {
		s.consumer.CloseAllowingRebalance()
		s.consumer = nil
	}
	if s.producer != nil {
		s.producer.Close()
		s.producer = nil
	}
}

// publish exports the model to ONNX, publishes it as the next version and
// then checkpoints it. Torch thread only.
func (s *Service) publish(ctx context.Context, t *trainer, st stepStats) error {
	params, err := t.model.exportParams()
	if err != nil {
		return err
	}
	onnx, err := policy.WriteONNX(t.arch, params)
	if err != nil {
		return err
	}
	archJSON, err := t.arch.JSON()
	if err != nil {
		return err
	}
	parent := s.version.Load()
	v := parent + 1
	sum := sha256.Sum256(onnx)
	now := time.Now()
	ev := &eventspb.Weights{
		Envelope:          eventspb.NewEnvelope(s.o.instance),
		PolicyName:        s.o.policyName,
		Version:           v,
		ParentVersion:     parent,
		Onnx:              onnx,
		Format:            "onnx",
		OnnxSha256:        hex.EncodeToString(sum[:]),
		Architecture:      archJSON,
		CreatedAtUnixNano: now.UnixNano(),
		Updates:           uint64(s.updates.Load()),
		Metrics: map[string]float64{
			"loss": st.Loss, "policy_loss": st.PolicyLoss, "value_loss": st.ValueLoss, "entropy": st.Entropy,
			"bc_loss": st.BCLoss, "clip_frac": st.ClipFrac, "approx_kl": st.ApproxKL,
			"samples": float64(s.ingested.Load()), "demo_samples": float64(s.demoIn.Load()), "replay": float64(s.replay.len()),
		},
	}
	b, err := eventspb.Marshal(ev)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rec := &kgo.Record{Topic: s.catalog.Name(topics.Weights), Key: []byte(s.o.policyName), Value: b}
	if err := s.producer.ProduceSync(pctx, rec).FirstErr(); err != nil {
		return fmt.Errorf("unable to publish weights version %d: %w", v, kafka.NewRecordError(rec, err))
	}
	s.version.Store(v)
	s.m.version.Set(float64(v))
	s.m.published.Inc()
	if s.o.ckptDir != "" {
		c := checkpoint{Policy: s.o.policyName, Version: v, Updates: s.updates.Load(), Samples: s.ingested.Load(), BCDone: s.bcDone.Load(), SavedAt: now}
		if err := saveCheckpoint(s.o.ckptDir, c, onnx); err != nil {
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
	return webenv.SiteSplit(family, site) == webenv.SplitTest
}
