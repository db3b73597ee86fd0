package recorder

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

// batch is the records of consecutive polls: their rows by table, and the
// offsets to commit once the rows are in ClickHouse.
type batch struct {
	rows    *analytics.Rows
	offsets map[string]map[int32]kgo.EpochOffset
	topics  map[string]int // records by catalog topic name
	bad     map[string]int
	records int
	first   time.Time
}

func newBatch(rows *analytics.Rows) *batch {
	return &batch{rows: rows, offsets: map[string]map[int32]kgo.EpochOffset{},
		topics: map[string]int{}, bad: map[string]int{}}
}

func (b *batch) reset() {
	b.rows.Reset()
	clear(b.offsets)
	clear(b.topics)
	clear(b.bad)
	b.records = 0
	b.first = time.Time{}
}

// maxPoll bounds one poll, so a batch overshoots WithBatchRecords by at most
// this many records.
const maxPoll = 10_000

// caughtUpBatch and caughtUpWait: a batch of at least caughtUpBatch records
// is inserted as soon as a poll of caughtUpWait returns nothing.
const (
	caughtUpBatch = 10_000
	caughtUpWait  = 10 * time.Millisecond
)

// batchesInFlight is the pipeline depth: one batch inserting while the next
// fills. While ClickHouse is down the filled one waits, polling stops, and
// franz-go stops fetching once its buffer is full.
const batchesInFlight = 1

// consume is the poll loop. It decodes records into the current batch and
// hands full (or lingering) batches to the flusher, which inserts and then
// commits them in order.
func (r *Recorder) consume(pollCtx, flushCtx context.Context) {
	defer close(r.done)
	queue := make(chan *batch, batchesInFlight)
	free := make(chan *batch, batchesInFlight+2)
	flusherDone := make(chan struct{})
	go func() {
		defer close(flusherDone)
		r.flusher(flushCtx, queue, free)
	}()

	cur := newBatch(r.newRows())
	dec := newDecoder(r, r.o.decoders)
	hand := func() bool {
		if cur.records == 0 {
			return true
		}
		r.inflight.Add(1)
		select {
		case queue <- cur:
		case <-pollCtx.Done():
			// Stopping while the flusher is stuck: the batch is handed over
			// below, after the loop, or abandoned with the deadline.
			r.inflight.Add(-1)
			return false
		}
		select {
		case cur = <-free:
		default:
			cur = newBatch(r.newRows())
		}
		return true
	}

	l := &kafka.Loop{Name: "recorder", Poller: r.cl, Max: maxPoll, Log: r.o.log,
		Idle: func() time.Duration {
			wait := time.Second
			if cur.records > 0 {
				wait = max(time.Millisecond, r.o.linger-time.Since(cur.first))
			}
			// A batch of a good size goes as soon as we have caught up
			// with the broker (nothing buffered): waiting out the linger
			// would only delay it. Small batches wait, so a trickle does
			// not become a stream of tiny INSERTs (and parts).
			if cur.records >= caughtUpBatch {
				wait = min(wait, caughtUpWait)
			}
			return wait
		},
		Handle: func(pollCtx context.Context, fetches kgo.Fetches) error {
			caughtUp := cur.records >= caughtUpBatch
			now := time.Now()
			recs := fetches.Records()
			if len(recs) > 0 {
				r.mu.Lock()
				if r.stats.FirstPoll.IsZero() {
					r.stats.FirstPoll = now
				}
				r.mu.Unlock()
				dec.decode(cur, recs, now)
				r.m.pending.Set(float64(r.pending.Add(int64(len(recs)))))
			}
			wantRebalance := r.rebalance.Load()
			full := cur.records >= r.o.batchRecords
			lingered := cur.records > 0 && time.Since(cur.first) >= r.o.linger
			if full || lingered || (caughtUp && len(recs) == 0) || wantRebalance {
				if !hand() {
					return kafka.ErrStop
				}
			}
			if wantRebalance || cur.records == 0 {
				// Nothing polled is outstanding once the flusher is idle:
				// let a waiting rebalance through (a no-op when none
				// waits).
				if r.waitIdle(pollCtx) {
					r.rebalance.Store(false)
					r.cl.AllowRebalance()
				}
			}
			return nil
		}}
	if err := l.Run(pollCtx); err != nil {
		r.o.log.Error("fetch failed for good", "err", err)
		r.fail(err)
	}

	// Stopping: insert and commit what was polled, under the stop deadline
	// (flushCtx), then let the flusher finish.
	if cur.records > 0 {
		r.inflight.Add(1)
		select {
		case queue <- cur:
		case <-flushCtx.Done():
			r.inflight.Add(-1)
		}
	}
	close(queue)
	<-flusherDone
}

// waitIdle waits until no batch is queued or inserting; with records still
// being polled it returns at once (false) unless a rebalance is waiting.
func (r *Recorder) waitIdle(ctx context.Context) bool {
	for r.inflight.Load() > 0 {
		if !r.rebalance.Load() {
			return false
		}
		select {
		case <-r.idle:
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return true
}
