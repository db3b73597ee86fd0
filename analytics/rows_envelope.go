package analytics

import "time"

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
	// Run is the run the record belongs to: the topic prefix of the
	// recorder's catalog (e.g. "run-20261201-170234."), the run column.
	Run string
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

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
