package analytics

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Tables of migrations/: one raw table per topic, plus what the recorder
// keeps that is not an event.
const (
	TableTasks       = "tasks"
	TableObs         = "obs"
	TableActions     = "actions"
	TableRewards     = "rewards"
	TableTelemetry   = "telemetry"
	TableTransitions = "transitions"
	TableEpisodes    = "episodes"
	TableWeights     = "weights"
	TableDeadLetters = "dead_letters"
	TableBadRecords  = "bad_records"
	TableConsumerLag = "consumer_lag"
	// TableEventLog archives the raw records of the joiner's inputs.
	TableEventLog = "event_log"
)

// EventTables maps each recorded catalog topic to its raw table. The
// joiner's changelog is join state, not events, and is not recorded.
var EventTables = map[string]string{
	topics.Tasks:       TableTasks,
	topics.Obs:         TableObs,
	topics.Actions:     TableActions,
	topics.Rewards:     TableRewards,
	topics.Telemetry:   TableTelemetry,
	topics.Transitions: TableTransitions,
	topics.Episodes:    TableEpisodes,
	topics.Weights:     TableWeights,
	topics.DLQ:         TableDeadLetters,
}

// Rows buffers decoded records, one Block per table, for one INSERT per
// table. It is not safe for concurrent use; Insert is the only method that
// runs work in parallel (one goroutine per table).
type Rows struct {
	events   map[string]eventTable // by catalog topic
	bad      *table[badRow]
	eventLog *table[struct{}]
	blocks   []*Block

	frames      *table[obs]         // frames.go
	frameSample int                 // -1: no frames; else WithFrames
	frameSeen   map[string]struct{} // hashes in the frames block
}

// NewRows returns empty buffers for every table.
func NewRows(opts ...RowsOption) *Rows {
	r := &Rows{events: map[string]eventTable{}, bad: newBadTable(), eventLog: newEventLogTable(),
		frames: newFramesTable(), frameSample: -1, frameSeen: map[string]struct{}{}}
	for _, o := range opts {
		o(r)
	}
	for _, t := range []eventTable{newTaskTable(), newObsTable(r.addFrame), newActionTable(), newRewardTable(), newTelemetryTable(),
		newTransitionTable(), newEpisodeTable(), newWeightsTable(), newDeadLetterTable()} {
		r.events[t.topic()] = t
		r.blocks = append(r.blocks, t.block())
	}
	r.blocks = append(r.blocks, &r.bad.Block, &r.eventLog.Block, &r.frames.Block)
	return r
}

// decoders are the event tables, used for their decoders only (EventID).
var decoders = sync.OnceValue(func() map[string]eventTable { return NewRows().events })

// EventID decodes a record of the catalog topic (unprefixed) as the
// recorder does and returns its event id: what a raw table is keyed by.
func EventID(topic string, value []byte) (string, error) {
	t, ok := decoders()[topic]
	if !ok {
		return "", fmt.Errorf("unable to decode a record of %q: the topic has no event type", topic)
	}
	return t.eventID(value)
}

// Add decodes rec, read from the catalog topic named topic (unprefixed, e.g.
// topics.Obs), and buffers it as a row of that topic's table. A record that
// does not decode is buffered as a row of bad_records instead, with the
// reason, and the decode error is returned so the caller can count it:
// either way the record is kept, never dropped.
func (r *Rows) Add(topic string, rec *Record) error {
	switch topic {
	case topics.Obs, topics.Actions, topics.Rewards:
		// The joiner's inputs are archived byte for byte, whatever they
		// decode to, so that a replay can rebuild the transitions.
		r.eventLog.add(struct{}{}, rec)
	}
	var err error
	if t, ok := r.events[topic]; ok {
		err = t.addRecord(rec)
	} else {
		err = &eventspb.DecodeError{Type: "unknown", Reason: eventspb.ReasonCode_REASON_CODE_UNKNOWN_TYPE,
			Err: fmt.Errorf("topic %q has no event type", topic)}
	}
	if err != nil {
		var de *eventspb.DecodeError
		typ, code := "", eventspb.ReasonCode_REASON_CODE_OTHER
		if errors.As(err, &de) {
			typ, code = de.Type, de.Reason
		}
		r.bad.add(badRow{messageType: typ, reason: err.Error(), code: code}, rec)
	}
	return err
}

// Len is the number of buffered rows over all tables.
func (r *Rows) Len() int {
	n := 0
	for _, b := range r.blocks {
		n += b.rows
	}
	return n
}

// Counts returns the buffered rows per table (tables without rows omitted).
func (r *Rows) Counts() map[string]int {
	out := map[string]int{}
	for _, b := range r.blocks {
		if b.rows > 0 {
			out[b.table] = b.rows
		}
	}
	return out
}

// Merge appends o's rows to r, table by table (o is left as it was). It lets
// several goroutines decode into Rows of their own that then make one
// INSERT per table.
func (r *Rows) Merge(o *Rows) {
	for i, b := range r.blocks {
		ob := o.blocks[i]
		if ob.rows == 0 {
			continue
		}
		for j, c := range b.cols {
			c.appendFrom(ob.cols[j])
		}
		b.rows += ob.rows
	}
}

// Reset empties every buffer, keeping capacity.
func (r *Rows) Reset() {
	for _, b := range r.blocks {
		b.Reset()
	}
}

// Insert writes every non-empty table buffer into database, one INSERT per
// table, the tables in parallel. A table whose INSERT succeeded is emptied,
// so calling Insert again after an error only re-sends the tables that
// failed. The error is an *InsertError.
func (r *Rows) Insert(ctx context.Context, conn driver.Conn, database string) error {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed = map[string]error{}
	)
	for _, b := range r.blocks {
		if b.rows == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.Insert(ctx, conn, database); err != nil {
				mu.Lock()
				failed[b.table] = err
				mu.Unlock()
				return
			}
			b.Reset()
		}()
	}
	wg.Wait()
	if len(failed) == 0 {
		return nil
	}
	e := &InsertError{}
	for t := range failed {
		e.Tables = append(e.Tables, t)
	}
	sort.Strings(e.Tables)
	for _, t := range e.Tables {
		e.errs = append(e.errs, failed[t])
	}
	return e
}

// InsertError says which tables' INSERTs failed. Its text is one line (the
// first failure, in table order); Unwrap gives every failure.
type InsertError struct {
	Tables []string
	errs   []error
}

func (e *InsertError) Error() string {
	return fmt.Sprintf("unable to insert into %d table(s) (%s): %v", len(e.Tables), strings.Join(e.Tables, ", "), e.errs[0])
}

func (e *InsertError) Unwrap() []error { return e.errs }
