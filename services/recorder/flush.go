package recorder

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
)

// flusher inserts the queued batches in order and commits each one's
// offsets after its rows are in ClickHouse. A batch whose insert is
// abandoned (ctx cancelled at the stop deadline) is not committed.
func (r *Recorder) flusher(ctx context.Context, queue <-chan *batch, free chan<- *batch) {
	for b := range queue {
		t0 := time.Now()
		if err := r.insert(ctx, b); err != nil {
			r.o.log.Warn("batch abandoned uncommitted; it will be re-consumed", "records", b.records, "err", err)
		} else {
			r.m.insertTime.Observe(time.Since(t0).Seconds())
			r.m.batchRecords.Observe(float64(b.records))
			r.commit(ctx, b)
		}
		r.m.pending.Set(float64(r.pending.Add(-int64(b.records))))
		b.reset()
		select {
		case free <- b:
		default:
		}
		if r.inflight.Add(-1) == 0 {
			select {
			case r.idle <- struct{}{}:
			default:
			}
		}
	}
}

// insert writes the batch's rows, retrying with exponential backoff and
// jitter for as long as it takes (no record is given up while the process
// lives), unless ctx ends. Tables already inserted are not re-sent.
func (r *Recorder) insert(ctx context.Context, b *batch) error {
	// Jittered: recorders of one group that lost ClickHouse together do
	// not come back in lockstep.
	bo := backoff.Backoff{Min: r.o.backoffMin, Max: r.o.backoffMax, Jitter: true}
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, r.o.insertTimeout)
		err := b.rows.Insert(actx, r.conn, r.ch.Database)
		cancel()
		if err == nil {
			if attempt > 1 {
				r.o.log.Info("ClickHouse inserts succeed again", "attempts", attempt)
			}
			r.setInsertErr(nil)
			return nil
		}
		if ctx.Err() != nil {
			return errors.Join(err, ctx.Err())
		}
		r.m.insertErrors.Inc()
		r.mu.Lock()
		r.stats.InsertErrors++
		r.mu.Unlock()
		r.setInsertErr(err)
		r.o.log.Warn("insert failed; retrying", "attempt", attempt, "retry_in", bo.Next(), "pending_rows", b.rows.Len(), "err", err)
		if bo.Wait(ctx) != nil {
			return errors.Join(err, ctx.Err())
		}
	}
}

func (r *Recorder) setInsertErr(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil:
		r.insertErr = nil
		r.m.clickhouseUp.Set(1)
	case r.insertErr == nil:
		r.insertErr, r.insertSince = err, time.Now()
		r.m.clickhouseUp.Set(0)
	default:
		r.insertErr = err
	}
}

// commit commits the batch's offsets. A failure (the member was kicked out
// of the group while ClickHouse was down) is logged and counted, not
// retried: the partitions' new owner re-delivers the records, and the store
// absorbs the duplicates.
func (r *Recorder) commit(ctx context.Context, b *batch) {
	var cerr error
	r.cl.CommitOffsetsSync(ctx, b.offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil && cerr == nil {
					cerr = e
				}
			}
		}
	})
	if cerr != nil {
		r.m.commitErrors.Inc()
		r.o.log.Warn("offset commit failed after insert; records will be re-delivered and de-duplicated", "records", b.records, "err", cerr)
		return
	}
	var bad int
	for topic, n := range b.topics {
		r.m.committed.WithLabelValues(topic).Add(float64(n))
	}
	for topic, n := range b.bad {
		r.m.bad.WithLabelValues(topic).Add(float64(n))
		bad += n
	}
	r.mu.Lock()
	r.stats.Records += int64(b.records)
	r.stats.Bad += int64(bad)
	r.stats.Batches++
	r.stats.LastCommit = time.Now()
	r.mu.Unlock()
}
