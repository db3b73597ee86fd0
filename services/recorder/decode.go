package recorder

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

// minParallel is the poll size below which decoding stays on the poll
// goroutine: splitting a handful of records costs more than it saves.
const minParallel = 1024

// decoder turns polled records into rows. Decoding (protobuf unmarshal and
// schema validation) is the recorder's main CPU cost, so a large poll is
// split over several goroutines, each filling Rows of its own, which are
// then merged into the batch: still one INSERT per table per batch.
type decoder struct {
	r       *Recorder
	scratch []*decodeWorker
}

type decodeWorker struct {
	rows   *analytics.Rows
	topics map[string]int
	bad    map[string]int
}

func newDecoder(r *Recorder, workers int) *decoder {
	d := &decoder{r: r}
	for i := 0; i < max(1, workers); i++ {
		d.scratch = append(d.scratch, &decodeWorker{rows: r.newRows(), topics: map[string]int{}, bad: map[string]int{}})
	}
	return d
}

// decode appends recs to b: their rows, their counts and the offsets to
// commit once b is inserted.
func (d *decoder) decode(b *batch, recs []*kgo.Record, now time.Time) {
	if len(recs) == 0 {
		return
	}
	if b.records == 0 {
		b.first = now
	}
	for _, kr := range recs {
		ps := b.offsets[kr.Topic]
		if ps == nil {
			ps = map[int32]kgo.EpochOffset{}
			b.offsets[kr.Topic] = ps
		}
		ps[kr.Partition] = kgo.EpochOffset{Epoch: kr.LeaderEpoch, Offset: kr.Offset + 1}
	}
	b.records += len(recs)

	workers := len(d.scratch)
	if len(recs) < minParallel || workers == 1 {
		d.decodeInto(recs, now, b.rows, b.topics, b.bad)
		return
	}
	var wg sync.WaitGroup
	per := (len(recs) + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min((w+1)*per, len(recs))
		if lo >= hi {
			break
		}
		sw := d.scratch[w]
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.decodeInto(recs[lo:hi], now, sw.rows, sw.topics, sw.bad)
		}()
	}
	wg.Wait()
	for _, sw := range d.scratch {
		b.rows.Merge(sw.rows)
		sw.rows.Reset()
		for k, n := range sw.topics {
			b.topics[k] += n
		}
		for k, n := range sw.bad {
			b.bad[k] += n
		}
		clear(sw.topics)
		clear(sw.bad)
	}
}

func (d *decoder) decodeInto(recs []*kgo.Record, now time.Time, rows *analytics.Rows, topics, bad map[string]int) {
	var rec analytics.Record
	for _, kr := range recs {
		kind := d.r.kinds[kr.Topic]
		rec = analytics.Record{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Key: kr.Key,
			Value: kr.Value, Timestamp: kr.Timestamp, RecordedAt: now, Run: d.r.catalog.Prefix}
		if err := rows.Add(kind, &rec); err != nil {
			bad[kind]++
			d.r.o.log.Debug("undecodable record kept in bad_records", "err", kafka.NewRecordError(kr, err))
		}
		topics[kind]++
	}
}
