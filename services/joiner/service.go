package joiner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Service is the joiner target: one member of the joiner consumer group.
//
// Exactly once: each polled batch is one Kafka transaction holding the
// batch's transitions, episode summaries and dead letters, the changelog
// records of the join state the batch changed, and the batch's consumed
// offsets (franz-go's GroupTransactSession). Either all of it commits or
// none of it does; after an abort the machines of the batch are rebuilt from
// the changelog, which then matches the committed offsets again.
//
// Rebalances are blocked while a batch is in flight (BlockRebalanceOnPoll),
// so partitions never change owner mid-transaction. A newly assigned
// partition's machine is rebuilt from the changelog, read_committed up to
// its end, before its first record is processed; by then the previous
// owner's last transaction is resolved (KIP-447 stable offsets for the
// offsets, the changelog read waits for the markers of everything below the
// end it saw).
type Service struct {
	// loggedCommit: the first commit since the last assignment was logged.
	loggedCommit atomic.Bool

	cfg      *config.Config
	factory  *kafka.Factory
	catalog  *topics.Catalog
	set      Settings
	log      *slog.Logger
	reg      prometheus.Registerer
	group    string
	instance string
	maxBatch int

	sessionTimeout time.Duration
	txnTimeout     time.Duration
	stallTimeout   time.Duration

	kinds     map[string]Kind
	changelog string
	trTopic   string
	epTopic   string
	dlqTopic  string
	metrics   *metrics

	// sess is the current session; only the supervisor goroutine (and
	// the loop it runs) touches it. See session.go.
	sess      *kgo.GroupTransactSession
	admin     *kgo.Client // lag checks of the stall watchdog
	stopPoll  context.CancelFunc
	cancelTxn context.CancelFunc
	done      chan struct{}
	failed    chan error
	failOnce  sync.Once

	firstAssigned atomic.Int64 // unix nanoseconds of the first assignment
	// rebalanced is set when partitions were revoked or lost since the
	// last transaction ended (see run).
	rebalanced atomic.Bool
	// lastProgress: unix nanoseconds of the last commit or restore (the
	// stall watchdog's clock); restoring is set during a restore.
	lastProgress atomic.Int64
	restoring    atomic.Bool

	mu sync.Mutex
	// parts holds the machine of every assigned partition number; nil
	// until it is restored from the changelog (again after an abort).
	parts     map[int32]*Machine
	committed Stats
	txns      [2]int64 // committed, aborted
	loopErr   error
	// outageSince is when the current session was lost (zero when none
	// is); outageErr says why. The next commit ends the outage.
	outageSince time.Time
	outageErr   error
}

// New builds a joiner member. The catalog names its topics; cfg supplies the
// Kafka security settings and the client id.
func New(cfg *config.Config, f *kafka.Factory, cat *topics.Catalog, opts ...Option) (*Service, error) {
	s := &Service{
		cfg:            cfg,
		factory:        f,
		catalog:        cat,
		set:            DefaultSettings(),
		log:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		reg:            prometheus.NewRegistry(),
		group:          cat.Prefix + "joiner",
		instance:       "joiner",
		maxBatch:       10000,
		sessionTimeout: 10 * time.Second,
		txnTimeout:     15 * time.Second,
		stallTimeout:   60 * time.Second,
		parts:          map[int32]*Machine{},
		done:           make(chan struct{}),
		failed:         make(chan error, 1),
	}
	for _, o := range opts {
		o(s)
	}
	if err := s.set.Validate(); err != nil {
		return nil, err
	}
	if s.maxBatch < 1 {
		return nil, fmt.Errorf("invalid joiner batch size %d: must be positive", s.maxBatch)
	}
	s.kinds = map[string]Kind{cat.Name(topics.Obs): KindObs, cat.Name(topics.Actions): KindAction, cat.Name(topics.Rewards): KindReward}
	s.changelog = cat.Name(topics.JoinerChangelog)
	s.trTopic, s.epTopic, s.dlqTopic = cat.Name(topics.Transitions), cat.Name(topics.Episodes), cat.Name(topics.DLQ)
	m, err := newMetrics(s.reg)
	if err != nil {
		return nil, err
	}
	s.metrics = m
	s.log = s.log.With("service", "joiner", "group", s.group, "instance", s.instance)
	return s, nil
}

// Name implements app.Service.
func (s *Service) Name() string { return "joiner" }

// startFenceBound is how long Start tries to fence the previous
// transaction before the member gives up starting.
const startFenceBound = 2 * time.Minute

// Start checks the topics, joins the group and starts consuming.
func (s *Service) Start(ctx context.Context) error {
	if err := s.checkTopics(ctx); err != nil {
		return err
	}
	admin, err := s.factory.NewClient("joiner-watchdog")
	if err != nil {
		return err
	}
	// A young or loaded cluster may take a while: the transaction log's
	// append waits for a lagging replica to leave the ISR
	// (replica.lag.time.max.ms, 30 s). A drill under load spent 30 s in
	// one attempt, and both joiner members exited at start.
	fenceCtx, cancel := context.WithTimeout(ctx, startFenceBound)
	defer cancel()
	sess, err := s.newSession(fenceCtx)
	if err != nil {
		admin.Close()
		return err
	}
	s.admin = admin
	pollCtx, stopPoll := context.WithCancel(context.WithoutCancel(ctx))
	txnCtx, cancelTxn := context.WithCancel(context.WithoutCancel(ctx))
	s.stopPoll, s.cancelTxn = stopPoll, cancelTxn
	go s.supervise(pollCtx, txnCtx, sess)
	s.log.Info("joiner started", "inputs", slices.Sorted(maps.Keys(s.kinds)), "window", s.set.Window, "max_staleness", s.set.MaxStaleness, "settings", s.set.Fingerprint())
	return nil
}

// checkTopics guards the co-partitioning assumption: the inputs and the
// changelog must have the same number of partitions.
func (s *Service) checkTopics(ctx context.Context) error {
	cl, err := s.factory.NewClient("joiner-admin")
	if err != nil {
		return err
	}
	defer cl.Close()
	names := append(slices.Sorted(maps.Keys(s.kinds)), s.changelog)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	td, err := kadm.NewClient(cl).ListTopics(ctx, names...)
	if err != nil {
		return fmt.Errorf("unable to describe the joiner's topics: %w", err)
	}
	want := -1
	for _, n := range names {
		t, ok := td[n]
		if !ok || t.Err != nil {
			return fmt.Errorf("unable to use topic %s (run `asyncwebrl topics apply`): %v", n, t.Err)
		}
		if want < 0 {
			want = len(t.Partitions)
		}
		if len(t.Partitions) != want {
			return fmt.Errorf("unable to join: %s has %d partitions, %s has %d; the inputs and the changelog must be co-partitioned", n, len(t.Partitions), names[0], want)
		}
	}
	return nil
}

// Stop stops consuming, lets the transaction in flight finish under ctx's
// deadline and leaves the group.
func (s *Service) Stop(ctx context.Context) error {
	if s.stopPoll == nil {
		return nil
	}
	s.stopPoll()
	var err error
	select {
	case <-s.done:
	case <-ctx.Done():
		// Abandon the transaction: the broker aborts it and the next
		// owner consumes the batch again.
		s.cancelTxn()
		<-s.done
		err = fmt.Errorf("unable to finish the joiner's transaction in time: %w", ctx.Err())
	}
	// The supervisor closed the session on its way out.
	s.cancelTxn()
	s.admin.Close()
	c, a := s.Transactions()
	s.log.Info("joiner stopped", "transactions_committed", c, "transactions_aborted", a)
	return err
}

// Failed implements app.Failer: it yields when the member cannot go on
// (fenced by another member with its instance id, a record the broker
// rejects for good, a broken changelog).
func (s *Service) Failed() <-chan error { return s.failed }

// Healthy implements app.HealthChecker. While the member rebuilds a lost
// session (a broker outage) it is degraded, not unhealthy: it recovers by
// itself, and a restart would only add a second restore.
func (s *Service) Healthy(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loopErr != nil {
		return s.loopErr
	}
	select {
	case <-s.done:
		return errors.New("the joiner stopped consuming")
	default:
	}
	if !s.outageSince.IsZero() {
		return app.Degraded(fmt.Errorf("the joiner's Kafka session was lost %s ago and is being rebuilt: %w",
			time.Since(s.outageSince).Round(time.Second), s.outageErr))
	}
	return nil
}

// outage records that the session was lost (the first loss of an outage
// sets its start).
func (s *Service) outage(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outageSince.IsZero() {
		s.outageSince = time.Now()
	}
	s.outageErr = err
}

// endOutage: a transaction committed; an outage in progress is over.
func (s *Service) endOutage() {
	s.mu.Lock()
	since := s.outageSince
	s.outageSince, s.outageErr = time.Time{}, nil
	s.mu.Unlock()
	if !since.IsZero() {
		s.log.Info("joiner committing again after its session was lost", "outage", time.Since(since).Round(100*time.Millisecond))
	}
}

// FirstAssigned returns when the member first got partitions (zero before).
func (s *Service) FirstAssigned() time.Time {
	if n := s.firstAssigned.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// Committed returns the counters of this member's committed transactions.
func (s *Service) Committed() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var c Stats
	c.Add(s.committed)
	return c
}

// Transactions are the transactions this member committed and aborted.
func (s *Service) Transactions() (committed, aborted int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.txns[0], s.txns[1]
}

func (s *Service) fail(err error) {
	s.failOnce.Do(func() {
		s.log.Error("joiner failed", "err", err)
		s.mu.Lock()
		s.loopErr = err
		s.mu.Unlock()
		s.failed <- err
	})
}

// assigned registers the newly assigned partition numbers; their machines
// are restored before their first batch. It runs between batches.
func (s *Service) assigned(_ context.Context, _ *kgo.Client, got map[string][]int32) {
	if err := s.checkCoPartitioned(got); err != nil {
		s.fail(err)
		return
	}
	if len(got) > 0 {
		s.firstAssigned.CompareAndSwap(0, time.Now().UnixNano())
	}
	// The partition numbers name the machines; any input would do, they
	// are co-partitioned.
	ps := slices.Sorted(slices.Values(got[s.catalog.Name(topics.Obs)]))
	s.mu.Lock()
	for _, p := range ps {
		s.parts[p] = nil
	}
	n := len(s.parts)
	s.mu.Unlock()
	s.metrics.partitions.Set(float64(n))
	if len(ps) > 0 {
		s.log.Info("partitions assigned", "partitions", ps)
		s.loggedCommit.Store(false)
	}
}

// checkCoPartitioned verifies what the range balancer promises: every
// partition number is assigned for all three inputs or for none.
func (s *Service) checkCoPartitioned(got map[string][]int32) error {
	var ref []int32
	var refTopic string
	for _, t := range slices.Sorted(maps.Keys(s.kinds)) {
		ps := slices.Sorted(slices.Values(got[t]))
		if refTopic == "" {
			ref, refTopic = ps, t
			continue
		}
		if !slices.Equal(ps, ref) {
			return fmt.Errorf("unable to join: assigned partitions %v of %s but %v of %s; the inputs are not co-partitioned (same partition count and the range balancer are required)", ps, t, ref, refTopic)
		}
	}
	return nil
}

// revoked drops the machines of revoked or lost partitions; the next owner
// restores them from the changelog. It runs between batches.
func (s *Service) revoked(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	s.rebalanced.Store(true)
	s.mu.Lock()
	for t, ps := range lost {
		if _, ok := s.kinds[t]; !ok {
			continue
		}
		for _, p := range ps {
			delete(s.parts, p)
		}
	}
	n := len(s.parts)
	s.mu.Unlock()
	s.metrics.partitions.Set(float64(n))
}

// partitioner writes changelog records to the partition the machine set
// (the input's) and hashes every other record by key.
type partitioner struct {
	changelog string
	keyed     kgo.Partitioner
}

func (p partitioner) ForTopic(t string) kgo.TopicPartitioner {
	if t == p.changelog {
		return kgo.ManualPartitioner().ForTopic(t)
	}
	return p.keyed.ForTopic(t)
}
