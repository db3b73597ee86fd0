package actor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// producerOpts are the actor's producer settings: idempotent writes
// (franz-go's default, stated here because the joiner's duplicate handling
// should not be the only guard), acks from all in-sync replicas as
// idempotence requires, zstd batches (frames dominate the bytes), and a
// short linger so the events of many executors share batches. Batches keep
// franz-go's 1 MB bound: the actions, rewards and telemetry topics accept
// no more (max.message.bytes).
//
// A broker outage: records are kept and retried (idempotently, so a retry
// after a lost acknowledgement is not a duplicate) for up to
// outageDeliveryBound; while 20,000 of them wait, Produce blocks and so do
// the executors (back-pressure, nothing dropped). A record still not
// acknowledged after the bound fails loudly: an error line per record, the
// produce_errors metric, and its episode incomplete, which the joiner
// dead-letters and the learner never trains on.
func producerOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.ZstdCompression()),
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.MaxBufferedRecords(20000),
		kgo.RecordDeliveryTimeout(outageDeliveryBound),
	}
}

// outageDeliveryBound is how long an event may wait for the broker before
// it is given up (see producerOpts).
const outageDeliveryBound = 5 * time.Minute

// publisher sends the actor's events. Produce is asynchronous: an executor
// hands the event over and goes on; the client batches, retries and keeps
// per-partition order, so the events of one episode (one key) stay in
// order.
type publisher struct {
	// ctx outlives the executors' contexts: events of an episode that is
	// being aborted at shutdown must still go out. Stop ends it after the
	// flush.
	ctx      context.Context
	cl       *kgo.Client
	log      *slog.Logger
	m        *metrics
	c        *counters
	producer string
	// lost is told of every event the client gave up on after the
	// delivery bound.
	lost    func(error)
	obs     string
	actions string
	rewards string
	tel     string
	dlq     string
}

// send marshals ev (which validates it) and produces it under key.
func (p *publisher) send(topic, key string, ev eventspb.Event) error {
	b, err := eventspb.Marshal(ev)
	if err != nil {
		return fmt.Errorf("unable to publish to %s: %w", topic, err)
	}
	rec := &kgo.Record{Topic: topic, Key: []byte(key), Value: b}
	p.cl.Produce(p.ctx, rec, func(r *kgo.Record, err error) {
		if err != nil {
			p.c.produceErrors.Add(1)
			p.m.produceErrors.WithLabelValues(r.Topic).Inc()
			p.log.Error("unable to produce an event", "topic", r.Topic, "key", string(r.Key), "err", err)
			// Given up after the delivery bound: the broker was away too
			// long. Other refusals (a record too large) stay counted.
			if p.lost != nil && (errors.Is(err, kgo.ErrRecordTimeout) || errors.Is(err, kgo.ErrRecordRetries)) {
				p.lost(err)
			}
			return
		}
		p.c.produced.Add(1)
		p.m.produced.WithLabelValues(r.Topic).Inc()
	})
	return nil
}

// flush waits until every produced event is acknowledged or ctx ends.
func (p *publisher) flush(ctx context.Context) error {
	if err := p.cl.Flush(ctx); err != nil {
		return fmt.Errorf("unable to flush the actor's events: %w", err)
	}
	return nil
}
