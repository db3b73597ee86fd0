package analytics

import (
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// Record is where an event was read and when it was recorded: the columns
// every raw table carries besides the envelope.
type Record struct {
	Topic     string // full topic name, as read
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Timestamp time.Time // the Kafka record timestamp
	// RecordedAt is when the recorder decoded the record.
	RecordedAt time.Time
}

// maxDateTime is the last second ClickHouse's DateTime (a UInt32) holds.
const maxDateTime = 1<<32 - 1

// seconds turns unix nanoseconds into DateTime seconds, clamped to the
// type's range so a producer's broken clock cannot wrap around.
func seconds(ns int64) int64 {
	s := ns / int64(time.Second)
	switch {
	case s < 0:
		return 0
	case s > maxDateTime:
		return maxDateTime
	}
	return s
}

func timeSeconds(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return seconds(t.UnixNano())
}

// envCols are the envelope and record columns, first in every raw table.
type envCols struct {
	eventID        *strCol
	schemaVersion  *col[uint32]
	producer       *strCol
	producedAtNs   *col[int64]
	producedAt     *col[int64]
	episodeID      *strCol
	step           *col[uint32]
	source         *col[int8]
	kafkaPartition *col[int32]
	kafkaOffset    *col[int64]
	payloadBytes   *col[uint32]
	recordedAt     *col[int64]
}

func newEnvCols(b *Block) envCols {
	return envCols{
		eventID:        newStrCol(b, "event_id"),
		schemaVersion:  newCol[uint32](b, "schema_version"),
		producer:       newStrCol(b, "producer"),
		producedAtNs:   newCol[int64](b, "produced_at_ns"),
		producedAt:     newCol[int64](b, "produced_at"),
		episodeID:      newStrCol(b, "episode_id"),
		step:           newCol[uint32](b, "step"),
		source:         newCol[int8](b, "source"),
		kafkaPartition: newCol[int32](b, "kafka_partition"),
		kafkaOffset:    newCol[int64](b, "kafka_offset"),
		payloadBytes:   newCol[uint32](b, "payload_bytes"),
		recordedAt:     newCol[int64](b, "recorded_at"),
	}
}

// add appends the envelope columns of one row. Enum columns take the proto
// enum number: the ClickHouse Enum8 definitions use the same numbers
// (TestIntegrationEnumsMatchProto guards that).
func (e *envCols) add(env *eventspb.Envelope, r *Record) {
	e.eventID.add(env.GetEventId())
	e.schemaVersion.add(env.GetSchemaVersion())
	e.producer.add(env.GetProducer())
	e.producedAtNs.add(env.GetProducedAtUnixNano())
	e.producedAt.add(seconds(env.GetProducedAtUnixNano()))
	e.episodeID.add(env.GetEpisodeId())
	e.step.add(env.GetStep())
	e.source.add(int8(env.GetSource()))
	e.kafkaPartition.add(r.Partition)
	e.kafkaOffset.add(r.Offset)
	e.payloadBytes.add(uint32(len(r.Value)))
	e.recordedAt.add(timeSeconds(r.RecordedAt))
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
