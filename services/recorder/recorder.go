package recorder

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// NewClient builds the Kafka client with the caller's seeds, security and
// logging, plus the consumer options the recorder passes.
type NewClient func(opts ...kgo.Opt) (*kgo.Client, error)

// Recorder is the recorder service (app.Service, app.HealthChecker,
// app.Failer).
type Recorder struct {
	o         options
	m         *metrics
	catalog   *topics.Catalog
	ch        analytics.Config
	newClient NewClient
	kinds     map[string]string // full topic name -> catalog name

	conn driver.Conn
	cl   *kgo.Client

	pollCancel  context.CancelFunc // stops connecting and polling (Stop's first step)
	flushCancel context.CancelFunc // abandons the in-flight insert (Stop's deadline)
	done        chan struct{}      // closed when the consume loop and flusher have exited
	lagDone     chan struct{}
	failed      chan error

	rebalance atomic.Bool   // a rebalance waits for us to release polled records
	consuming atomic.Bool   // ClickHouse answered and the poll loop runs (Drain can progress)
	inflight  atomic.Int64  // batches queued or inserting
	pending   atomic.Int64  // records polled and not yet committed (or abandoned)
	idle      chan struct{} // signalled by the flusher when inflight drops to 0

	mu          sync.Mutex
	insertErr   error // set while ClickHouse cannot be written (or reached at start)
	insertSince time.Time
	stats       Stats
}

// Stats are the recorder's counters since Start, for benchmarks and tests.
type Stats struct {
	Records      int64     // records inserted and committed
	Bad          int64     // of which undecodable (in bad_records)
	Batches      int64     // batches inserted
	InsertErrors int64     // failed INSERT attempts
	FirstPoll    time.Time // when the first records arrived
	LastCommit   time.Time // when the last batch was committed
}

// New builds a recorder of the catalog's event topics into the ClickHouse
// database ch.Database.
func New(catalog *topics.Catalog, ch analytics.Config, newClient NewClient, opts ...Option) (*Recorder, error) {
	o := defaults()
	o.group = catalog.Prefix + "recorder"
	for _, opt := range opts {
		opt(&o)
	}
	if ch.Database == "" {
		return nil, errors.New("unable to build recorder: no ClickHouse database configured")
	}
	if o.batchRecords < 1 || o.linger <= 0 || o.backoffMin <= 0 || o.backoffMax < o.backoffMin {
		return nil, fmt.Errorf("unable to build recorder: invalid batch (%d records, linger %s) or backoff (%s..%s)",
			o.batchRecords, o.linger, o.backoffMin, o.backoffMax)
	}
	m, err := newMetrics(o.reg)
	if err != nil {
		return nil, err
	}
	kinds := map[string]string{}
	for topic := range analytics.EventTables {
		kinds[catalog.Name(topic)] = topic
	}
	return &Recorder{o: o, m: m, catalog: catalog, ch: ch, newClient: newClient, kinds: kinds,
		failed: make(chan error, 1), idle: make(chan struct{}, 1)}, nil
}

// Name implements app.Service.
func (r *Recorder) Name() string { return "recorder" }

// newRows is a buffer of rows that keeps the configured frames.
func (r *Recorder) newRows() *analytics.Rows {
	if r.o.frameSample < 0 {
		return analytics.NewRows()
	}
	return analytics.NewRows(analytics.WithFrames(r.o.frameSample))
}

// Start builds the consumer, connects to ClickHouse and applies the
// migrations, then starts consuming. When ClickHouse cannot be reached, Start
// still returns: connecting is retried in the background (with backoff,
// /healthz saying why) and consuming starts once the schema is in place, so
// that one target's outage does not stop a -target=all process.
func (r *Recorder) Start(ctx context.Context) error {
	names := make([]string, 0, len(r.kinds))
	for n := range r.kinds {
		names = append(names, n)
	}
	opts := []kgo.Opt{
		kgo.ConsumerGroup(r.o.group),
		kgo.ConsumeTopics(names...),
		// A new group records history from the beginning.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// The joiner writes transitions, episodes and dead letters in
		// transactions, and an aborted one is written again by the next
		// attempt: read uncommitted, ClickHouse held events that never
		// happened (issue #15). Analytics record only what committed.
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DisableAutoCommit(),
		// Between a poll and the commit of what it returned we own those
		// partitions; the callback below tells us a rebalance is waiting.
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsCallbackBlocked(func(context.Context, *kgo.Client) { r.rebalance.Store(true) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
			r.o.log.Info("partitions revoked", "partitions", lost)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
			r.o.log.Warn("partitions lost; their uncommitted records will be re-delivered to the new owner", "partitions", lost)
		}),
	}
	if r.o.session > 0 {
		opts = append(opts, kgo.SessionTimeout(r.o.session))
	}
	cl, err := r.newClient(opts...)
	if err != nil {
		return err
	}
	r.cl = cl
	pollCtx, pollCancel := context.WithCancel(context.Background())
	flushCtx, flushCancel := context.WithCancel(context.Background())
	r.pollCancel, r.flushCancel = pollCancel, flushCancel
	r.done = make(chan struct{})
	r.lagDone = make(chan struct{})

	conn, err := r.connect(ctx)
	if err != nil {
		r.setInsertErr(err)
		r.o.log.Warn("ClickHouse unavailable at start; retrying in the background, not consuming until it answers", "err", err)
	}
	go func() {
		if conn == nil {
			if conn = r.connectLoop(pollCtx); conn == nil {
				close(r.lagDone)
				close(r.done)
				return
			}
		}
		r.conn = conn
		r.consuming.Store(true)
		go r.snapshotLag(pollCtx)
		r.o.log.Info("recorder consuming", "group", r.o.group, "topics", len(names), "database", r.ch.Database,
			"batch_records", r.o.batchRecords, "linger", r.o.linger)
		r.consume(pollCtx, flushCtx)
	}()
	return nil
}

// connect opens the connection and brings the schema up to date.
func (r *Recorder) connect(ctx context.Context) (driver.Conn, error) {
	admin := r.ch
	admin.Database = "" // the target database may not exist yet; inserts name it
	conn, err := analytics.Open(ctx, admin)
	if err != nil {
		return nil, err
	}
	applied, err := analytics.Migrate(ctx, conn, r.ch.Database)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	for _, m := range applied {
		r.o.log.Info("migration applied", "database", r.ch.Database, "version", m.Version, "name", m.Name)
	}
	r.setInsertErr(nil)
	return conn, nil
}

// connectLoop retries connect with backoff until it works or ctx ends (nil).
func (r *Recorder) connectLoop(ctx context.Context) driver.Conn {
	bo := backoff.Backoff{Min: r.o.backoffMin, Max: r.o.backoffMax}
	for {
		if bo.Wait(ctx) != nil {
			return nil
		}
		conn, err := r.connect(ctx)
		if err == nil {
			r.o.log.Info("ClickHouse reachable; schema up to date")
			return conn
		}
		r.setInsertErr(err)
		r.o.log.Warn("ClickHouse still unavailable", "retry_in", bo.Next(), "err", err)
	}
}

// Stop stops polling, inserts and commits what was polled, then leaves the
// group. When ctx expires first (ClickHouse down), the pending batch is
// abandoned uncommitted: it is re-delivered to the next member.
func (r *Recorder) Stop(ctx context.Context) error {
	if r.cl == nil {
		return nil
	}
	r.pollCancel()
	var err error
	select {
	case <-r.done:
	case <-ctx.Done():
		r.flushCancel()
		<-r.done
		err = fmt.Errorf("unable to flush the pending batch before the stop deadline (it will be re-consumed): %w", ctx.Err())
	}
	r.flushCancel()
	<-r.lagDone
	// Leaves the group so its partitions move on at once. The poll loop has
	// ended, possibly right after a poll that blocked rebalances; a plain
	// Close would wait forever for AllowRebalance in LeaveGroup.
	r.cl.CloseAllowingRebalance()
	if r.conn != nil {
		err = errors.Join(err, r.conn.Close())
	}
	return err
}

// Healthy reports failing inserts (ClickHouse down) and an unreachable Kafka.
func (r *Recorder) Healthy(ctx context.Context) error {
	r.mu.Lock()
	ierr, since := r.insertErr, r.insertSince
	r.mu.Unlock()
	// Both outages are ridden out (inserts retry with back-pressure, the
	// consumer reconnects and rejoins): degraded, not a reason to restart.
	if ierr != nil {
		return app.Degraded(fmt.Errorf("ClickHouse inserts failing for %s (%d records pending, fetching paused): %w",
			time.Since(since).Round(time.Second), r.pending.Load(), ierr))
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := r.cl.Ping(ctx); err != nil {
		return app.Degraded(fmt.Errorf("unable to reach Kafka: %w", err))
	}
	return nil
}

// Failed yields when consuming cannot go on (a non-retryable Kafka error).
func (r *Recorder) Failed() <-chan error { return r.failed }

// Stats returns a copy of the counters.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

func (r *Recorder) fail(err error) {
	select {
	case r.failed <- err:
	default:
	}
}
