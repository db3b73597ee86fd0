package actor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/casstore"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/weightstopic"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Service is the actor target: the browser pool, the executors, the
// batching inference server and the Kafka clients.
type Service struct {
	cfg     *config.Config
	factory *kafka.Factory
	catalog *topics.Catalog
	opts    options
	log     *slog.Logger
	m       *metrics
	c       counters

	webenvURL string
	allow     *allowlist
	settler   env.Settler
	obs       *observer

	pool *pool
	// egress: the browsers' proxy (egress.go), started before the pool
	// and closed after it.
	egress *egress
	// policy decides the executors' actions (the ONNX network in the
	// batching inference server).
	policy    Policy
	pub       *publisher
	tasks     *taskSource
	execs     []*executor
	producer  *kgo.Client
	tasksCl   *kgo.Client
	weightsCl *kgo.Client

	cancel    context.CancelFunc // the executors and background loops
	pubCancel context.CancelFunc
	execWG    sync.WaitGroup
	bgWG      sync.WaitGroup
	stopOnce  sync.Once
	stopErr   error
	quietOnce sync.Once // StopProducing's work, run by it or by Stop
	quietErr  error
	// failed yields once when events were given up (the broker was away
	// longer than outageDeliveryBound): the process stops, loudly.
	failed   chan error
	failOnce sync.Once
}

var (
	_ app.Service       = (*Service)(nil)
	_ app.HealthChecker = (*Service)(nil)
	_ app.Producer      = (*Service)(nil)
)

// New builds an actor; Start launches its browsers and executors.
func New(cfg *config.Config, f *kafka.Factory, cat *topics.Catalog, opts ...Option) (*Service, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if o.browsers == 0 {
		o.browsers = (o.executors + 3) / 4
	}
	if o.webenvURL == "" && cfg != nil {
		o.webenvURL = cfg.WebenvURL
	}
	if o.taskGroup == "" {
		o.taskGroup = cat.Prefix + "actor"
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	allowed := o.allowed
	if len(allowed) == 0 {
		allowed = []string{o.webenvURL}
	}
	allow, err := newAllowlist(allowed)
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(o.reg)
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, factory: f, catalog: cat, opts: o, log: o.log.With("service", "actor"), m: m,
		webenvURL: o.webenvURL, allow: allow, settler: o.settler, failed: make(chan error, 1)}
	if s.settler == nil {
		s.settler = Visual{}
	}
	s.obs = &observer{enc: frameEncoder{maxSide: o.frameMaxSide, format: o.frameFormat, quality: o.jpegQuality}}
	if o.frameStore != "" {
		if s.obs.store, err = casstore.Open(o.frameStore); err != nil {
			return nil, fmt.Errorf("unable to open the frame store: %w", err)
		}
	}
	return s, nil
}

// Name implements app.Service.
func (s *Service) Name() string { return "actor" }

// Start implements app.Service: it connects to Kafka, loads the latest
// weights (or the initial policy), launches the browsers, opens every
// executor's tab and starts the executors. It returns once they run.
func (s *Service) Start(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			s.teardown(context.Background())
		}
	}()
	pubCtx, pubCancel := context.WithCancel(context.Background())
	s.pubCancel = pubCancel
	if s.producer, err = s.factory.NewClient("actor", producerOpts()...); err != nil {
		return err
	}
	s.pub = &publisher{ctx: pubCtx, cl: s.producer, log: s.log, m: s.m, c: &s.c, producer: s.opts.instance, lost: s.lost,
		obs: s.catalog.Name(topics.Obs), actions: s.catalog.Name(topics.Actions),
		rewards: s.catalog.Name(topics.Rewards), tel: s.catalog.Name(topics.Telemetry), dlq: s.catalog.Name(topics.DLQ)}

	var ww *weightsFollower
	if s.policy, ww, err = s.startPolicy(ctx); err != nil {
		return err
	}

	gen, err := newLocalTasks(s.opts.instance, s.opts.families, s.opts.firstSeed)
	if err != nil {
		return err
	}
	if s.tasksCl, err = s.factory.NewClient("actor-tasks",
		kgo.ConsumerGroup(s.opts.taskGroup),
		kgo.ConsumeTopics(s.catalog.Name(topics.Tasks)),
		// A new group starts at the oldest assignment: none is skipped.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitMarks(),
		kgo.AutoCommitInterval(time.Second),
	); err != nil {
		return err
	}
	s.tasks = newTaskSource(s.tasksCl, gen, s.opts.taskGrace, s.opts.taskPause, s.log)

	bopts := s.opts.browserOpts
	if !s.opts.unpaced {
		bopts = append(pacedFrames(), bopts...)
	}
	if s.egress, err = startEgress(s.allow, s.log, func(string) {
		s.c.blocked.Add(1)
		s.m.blocked.Inc()
	}); err != nil {
		return err
	}
	bopts = append(bopts, s.egress.browserOptions()...)
	if s.pool, err = newPool(ctx, s.opts.browsers, bopts, s.log, func() {
		s.c.restarts.Add(1)
		s.m.restarts.Inc()
	}); err != nil {
		return err
	}
	s.pool.setNice(s.opts.browserNice)
	s.execs = make([]*executor, s.opts.executors)
	errs := make([]error, len(s.execs))
	var wg sync.WaitGroup
	for i := range s.execs {
		s.execs[i] = newExecutor(s, i)
		wg.Add(1)
		go func(x *executor) {
			defer wg.Done()
			errs[x.idx] = x.open(ctx)
		}(s.execs[i])
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}

	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.goBG(func() {
		if err := s.tasks.run(runCtx, func() { s.m.badInputs.WithLabelValues("tasks").Inc() }); err != nil {
			s.fail(fmt.Errorf("actor stopped reading tasks: %w", err))
		}
	})
	s.goBG(func() {
		if err := ww.follow(runCtx, s.policy, ww.haveAny); err != nil {
			s.fail(fmt.Errorf("actor stopped following weights: %w", err))
		}
	})
	s.goBG(func() { s.publishTelemetry(runCtx) })
	s.goBG(func() { s.pool.watch(runCtx, 5*time.Second) })
	switch s.opts.mode {
	case ModeRaw:
		for _, x := range s.execs {
			s.execWG.Add(1)
			go func() {
				defer s.execWG.Done()
				s.runRaw(runCtx, x)
			}()
		}
	case ModeSync, ModeSyncStep:
		s.execWG.Add(1)
		go func() {
			defer s.execWG.Done()
			s.runSync(runCtx, s.opts.mode == ModeSync)
		}()
	default:
		for _, x := range s.execs {
			s.execWG.Add(1)
			go func() {
				defer s.execWG.Done()
				s.runAsync(runCtx, x)
			}()
		}
	}
	s.log.Info("actor running", "mode", s.opts.mode, "executors", len(s.execs), "browsers", len(s.pool.slots),
		"policy", s.opts.policyName, "version", s.policy.Version(), "webenv", s.webenvURL)
	return nil
}

// weightsFollower is the weights watcher plus whether the served model came
// from the topic.
type weightsFollower struct {
	*weightsWatcher
	haveAny bool
}

// startPolicy reads the latest weights and starts the inference server on
// them, or on the initial policy when none is published.
func (s *Service) startPolicy(ctx context.Context) (Policy, *weightsFollower, error) {
	var err error
	topic := s.catalog.Name(topics.Weights)
	if s.weightsCl, err = s.factory.NewClient("actor-weights", weightstopic.ConsumeOpts(topic)...); err != nil {
		return nil, nil, err
	}
	ww := &weightsFollower{weightsWatcher: &weightsWatcher{cl: s.weightsCl, topic: topic, policy: s.opts.policyName, log: s.log,
		onSwap: func(v uint64) {
			s.c.swaps.Add(1)
			s.m.swaps.Inc()
			s.m.version.Set(float64(v))
		},
		onBad: func() { s.m.badInputs.WithLabelValues("weights").Inc() },
	}}
	l, err := ww.catchUp(ctx, s.opts.weightsCatchUp)
	if err != nil {
		return nil, nil, err
	}
	onnx, version := s.opts.initialONNX, uint64(0)
	if l != nil {
		onnx, version, ww.haveAny = l.onnx, l.version, true
	} else if onnx == nil {
		if onnx, err = policy.InitialONNX(policy.DefaultArchitecture()); err != nil {
			return nil, nil, fmt.Errorf("unable to build the initial policy: %w", err)
		}
	}
	newPolicy := s.opts.newPolicy
	if newPolicy == nil {
		newPolicy = func(weights []byte, version uint64) (Policy, error) {
			popts := append([]policy.Option{policy.WithLogger(s.log)}, s.opts.policyOpts...)
			srv, err := policy.NewServer(weights, version, popts...)
			if err != nil {
				return nil, fmt.Errorf("unable to start the inference server: %w", err)
			}
			return onnxPolicy{srv}, nil
		}
	}
	p, err := newPolicy(onnx, version)
	if err != nil {
		return nil, nil, err
	}
	s.m.version.Set(float64(version))
	s.log.Info("policy loaded", "policy", s.opts.policyName, "version", version, "published", ww.haveAny)
	return p, ww, nil
}

func (s *Service) goBG(fn func()) {
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		fn()
	}()
}

// StopProducing implements app.Producer: the executors stop (an episode in
// progress is recorded as aborted), no task is taken any more (those taken
// are committed), the last telemetry goes out and every event is flushed
// under ctx's deadline. The browsers and the inference server stay until
// Stop. It runs once; a later call returns the first one's error.
func (s *Service) StopProducing(ctx context.Context) error {
	s.quietOnce.Do(func() { s.quietErr = s.quiesce(ctx) })
	return s.quietErr
}

// Stop implements app.Service: StopProducing's work (unless it ran), then
// every Chromium process is killed and the clients and the inference server
// close.
func (s *Service) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.teardown(ctx) })
	return s.stopErr
}

// quiesce ends everything that produces and flushes the producer.
func (s *Service) quiesce(ctx context.Context) error {
	var errs []error
	if s.cancel != nil {
		s.cancel()
	}
	// The executors get half of what is left: a decision of a language
	// model (seconds, and ONNX Runtime does not stop mid-run) must not
	// eat the flush's time. A 60-minute lm run lost its flush this way:
	// its executors took the whole 20 s and the flush found its deadline
	// gone, exit 1.
	ectx := ctx
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ectx, cancel = context.WithTimeout(ctx, time.Until(d)/2)
		defer cancel()
	}
	waitFor(ectx, &s.execWG)
	if s.tasksCl != nil {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := s.tasksCl.CommitMarkedOffsets(cctx); err != nil {
			errs = append(errs, fmt.Errorf("unable to commit the consumed tasks: %w", err))
		}
		cancel()
		s.tasksCl.Close()
	}
	if s.weightsCl != nil {
		s.weightsCl.Close()
	}
	waitFor(ctx, &s.bgWG)
	if s.pub != nil && len(s.execs) > 0 && s.cancel != nil {
		s.sendTelemetry()
	}
	if s.producer != nil {
		if err := s.pub.flush(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Service) teardown(ctx context.Context) error {
	var errs []error
	// StopProducing's error was its caller's to report; Stop reports it
	// only when it did that work itself.
	s.quietOnce.Do(func() {
		s.quietErr = s.quiesce(ctx)
		errs = append(errs, s.quietErr)
	})
	for _, x := range s.execs {
		if x != nil {
			x.close()
		}
	}
	if s.pool != nil {
		s.pool.close()
	}
	if s.egress != nil {
		if err := s.egress.close(); err != nil {
			errs = append(errs, fmt.Errorf("unable to stop the egress proxy: %w", err))
		}
	}
	if s.producer != nil {
		s.pubCancel()
		s.producer.Close()
	}
	if s.policy != nil {
		if err := s.policy.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	st := s.c.snapshot()
	s.log.Info("actor stopped", "steps", st.Steps, "episodes", st.Episodes, "aborted", st.Aborted,
		"blocked_requests", st.Blocked, "browser_restarts", st.Restarts, "crash_retries", st.Retried, "crash_given_up", st.GaveUp, "produce_errors", st.ProduceErrors)
	return errors.Join(errs...)
}

// waitFor waits for wg or ctx, whichever comes first.
func waitFor(ctx context.Context, wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Healthy implements app.HealthChecker: every browser answers and Kafka is
// reachable.
func (s *Service) Healthy(ctx context.Context) error {
	if s.pool == nil {
		return errors.New("actor not started")
	}
	for i := range s.pool.slots {
		b, _, err := s.pool.get(i)
		if err != nil {
			return err
		}
		if !alive(ctx, b, 3*time.Second) {
			return fmt.Errorf("browser %d does not answer (a restart is under way)", i)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := s.producer.Ping(pctx); err != nil {
		// The producer keeps the events and retries (see producerOpts):
		// degraded, not a reason to restart.
		return app.Degraded(fmt.Errorf("unable to reach Kafka: %w", err))
	}
	return nil
}

// Failed implements app.Failer: it yields when events were given up after
// the broker stayed away longer than the delivery bound. Their episodes are
// incomplete (a partition's later records fail with the first), so the
// joiner dead-letters them and the learner, which waits for an episode's
// terminal reward, never trains on them; the process stops so that a
// supervisor restarts it, instead of acting on with events nobody sees.
func (s *Service) Failed() <-chan error { return s.failed }

// lost is called for every event given up for good.
func (s *Service) lost(err error) {
	s.fail(fmt.Errorf("unable to deliver the actor's events within %s (is the broker down?): %w", outageDeliveryBound, err))
}

// fail reports the service's first fatal error.
func (s *Service) fail(err error) {
	s.failOnce.Do(func() { s.failed <- err })
}

// Stats returns the running totals.
func (s *Service) Stats() Stats { return s.c.snapshot() }

// Browsers describes the browser pool.
func (s *Service) Browsers() []BrowserInfo {
	if s.pool == nil {
		return nil
	}
	return s.pool.info()
}

// PolicyVersion returns the weights version being served.
func (s *Service) PolicyVersion() uint64 {
	if s.policy == nil {
		return 0
	}
	return s.policy.Version()
}

// TimeSplit returns the executors' time per phase since the start.
func (s *Service) TimeSplit() TimeSplit {
	var t TimeSplit
	for _, x := range s.execs {
		xt := x.ts.totals()
		t.Observe += xt.Observe
		t.Think += xt.Think
		t.Act += xt.Act
		t.Wait += xt.Wait
		t.Idle += xt.Idle
	}
	return t
}

// BrowserCPU returns the CPU time used so far by the live Chromium
// processes of the pool (Linux; 0 elsewhere).
func (s *Service) BrowserCPU() time.Duration {
	if s.pool == nil {
		return 0
	}
	return cpuTimeOf(s.pool.pids())
}

// SelfCPU returns this process's CPU time (Linux; 0 elsewhere).
func SelfCPU() time.Duration { return selfCPU() }

// pacedFrames restores Chromium's frame pacing over env.LaunchBrowser's
// unpaced flags (see options.unpaced).
func pacedFrames() []env.BrowserOption {
	return []env.BrowserOption{env.WithBrowserFlag("disable-frame-rate-limit", false), env.WithBrowserFlag("disable-gpu-vsync", false)}
}
