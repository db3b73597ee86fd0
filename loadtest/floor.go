package loadtest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// outputTopics are the topics the joiner writes inside its transactions.
var outputTopics = []string{topics.Transitions, topics.Episodes, topics.DLQ, topics.JoinerChangelog}

// writeFloor reads back everything the joiner committed (its outputs and
// changelog) and produces it again, byte for byte and partition for
// partition, into the floor catalog's copies of those topics, in as many
// transactions as the joiner committed. Nothing is consumed, decoded or
// joined, and no offsets are committed, so this is strictly less work than
// the joiner did for the same output on the same broker and cores: no
// exactly-once joiner that writes this output can take less time. It
// returns the time from the first Begin to the last End and what was
// written.
func writeFloor(ctx context.Context, newClient joiner.ClientFunc, from, to *topics.Catalog, txns int64) (time.Duration, OutputSize, error) {
	var recs []*kgo.Record
	var size OutputSize
	for _, t := range outputTopics {
		err := joiner.ReadCommitted(ctx, newClient, from.Name(t), nil, func(r *kgo.Record) error {
			recs = append(recs, &kgo.Record{Topic: to.Name(t), Partition: r.Partition, Key: r.Key, Value: r.Value, Headers: r.Headers})
			size.Records++
			size.Bytes += int64(len(r.Value))
			if t == topics.Transitions {
				size.Transitions++
				size.TransitionBytes += int64(len(r.Value))
			}
			return nil
		})
		if err != nil {
			return 0, size, fmt.Errorf("unable to read the joiner's output %s: %w", from.Name(t), err)
		}
	}
	if len(recs) == 0 {
		return 0, size, errors.New("unable to measure the write floor: the joiner wrote nothing")
	}
	cl, err := newClient(kgo.TransactionalID(to.Prefix+"floor"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return 0, size, err
	}
	defer cl.Close()
	// One untimed transaction first, with one record per topic: the
	// producer id and the topics' metadata are the joiner's start-up
	// costs too, and the joiner's time does not count its own.
	var warm []*kgo.Record
	for _, t := range outputTopics {
		warm = append(warm, &kgo.Record{Topic: to.Name(t), Key: []byte("warm-up"), Value: []byte("warm-up")}) // compacted topics need a key
	}
	if err := transact(ctx, cl, warm); err != nil {
		return 0, size, fmt.Errorf("unable to write the floor's warm-up: %w", err)
	}
	txns = max(1, min(txns, int64(len(recs))))
	per := (int64(len(recs)) + txns - 1) / txns
	t0 := time.Now()
	for i := int64(0); i < int64(len(recs)); i += per {
		if err := transact(ctx, cl, recs[i:min(i+per, int64(len(recs)))]); err != nil {
			return 0, size, fmt.Errorf("unable to write the floor's records: %w", err)
		}
	}
	return time.Since(t0), size, nil
}

// OutputSize is what the joiner committed: record values, by the sum of
// their lengths (what a consumer decodes; the broker's batches compress
// nothing here, frames being incompressible).
type OutputSize struct {
	// Records and Bytes: every output topic (transitions, episodes, dlq,
	// changelog).
	Records int
	Bytes   int64
	// Transitions and TransitionBytes: the transitions topic alone.
	Transitions     int
	TransitionBytes int64
}

// transact writes recs in one transaction: ProduceSync sends them together,
// like the joiner's asynchronous produce, and waits for all of them.
func transact(ctx context.Context, cl *kgo.Client, recs []*kgo.Record) error {
	if err := cl.BeginTransaction(); err != nil {
		return fmt.Errorf("unable to begin a transaction: %w", err)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		_ = cl.EndTransaction(ctx, kgo.TryAbort)
		return err
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("unable to commit a transaction: %w", err)
	}
	return nil
}
