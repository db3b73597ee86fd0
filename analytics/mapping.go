package analytics

import "github.com/asyncwebrl/asyncwebrl/schemas/eventspb"

// A table's mapping is written once, as a list of fields: each names its
// column and says how one row's value is taken (a getter of the event or
// of the record). The list makes the columns (in its order, which is the
// INSERT's) and fills them: there is no struct of columns, constructor
// and add method per table to keep in step.

// field is one column of a table whose rows come from values of type E,
// read at rec.
type field[E any] func(b *Block) func(e E, rec *Record)

// str is a String column.
func str[E any](name string, get func(E) string) field[E] {
	return func(b *Block) func(E, *Record) {
		c := newStrCol(b, name)
		return func(e E, _ *Record) { c.add(get(e)) }
	}
}

// val is a column of the Go type T clickhouse-go takes for it (UInt32 as
// uint32, Array(String) as []string, Nullable(UInt32) as *uint32, ...).
func val[E, T any](name string, get func(E) T) field[E] {
	return func(b *Block) func(E, *Record) {
		c := newCol[T](b, name)
		return func(e E, _ *Record) { c.add(get(e)) }
	}
}

// flag is a UInt8 column holding a bool.
func flag[E any](name string, get func(E) bool) field[E] {
	return val(name, func(e E) uint8 { return b2u(get(e)) })
}

// enum is an Enum8 column: the proto enum number, which the ClickHouse
// Enum8 definitions share (TestIntegrationEnumsMatchProto guards that).
func enum[E any, V ~int32](name string, get func(E) V) field[E] {
	return val(name, func(e E) int8 { return int8(get(e)) })
}

// bytesOf is a pair of columns for a byte payload kept as its size and
// sha256 (frames, models, dead letters' payloads stay on Kafka).
func bytesOf[E any](size, sum string, get func(E) []byte) []field[E] {
	return []field[E]{
		val(size, func(e E) uint32 { return uint32(len(get(e))) }),
		str(sum, func(e E) string { return sha256Hex(get(e)) }),
	}
}

// fromRecord is a column of the record itself.
func fromRecord[E, T any](name string, get func(*Record) T) field[E] {
	return func(b *Block) func(E, *Record) {
		c := newCol[T](b, name)
		return func(_ E, r *Record) { c.add(get(r)) }
	}
}

// recordStr is a String column of the record itself.
func recordStr[E any](name string, get func(*Record) string) field[E] {
	return func(b *Block) func(E, *Record) {
		c := newStrCol(b, name)
		return func(_ E, r *Record) { c.add(get(r)) }
	}
}

// envelope is the envelope and record columns, first in every raw table.
// episode, when not nil, gives episode_id instead of the envelope's.
func envelope[E any](get func(E) *eventspb.Envelope, episode func(E) string) []field[E] {
	env := func(f func(*eventspb.Envelope) string) func(E) string {
		return func(e E) string { return f(get(e)) }
	}
	if episode == nil {
		episode = env((*eventspb.Envelope).GetEpisodeId)
	}
	return []field[E]{
		str("event_id", env((*eventspb.Envelope).GetEventId)),
		val("schema_version", func(e E) uint32 { return get(e).GetSchemaVersion() }),
		str("producer", env((*eventspb.Envelope).GetProducer)),
		val("produced_at_ns", func(e E) int64 { return get(e).GetProducedAtUnixNano() }),
		val("produced_at", func(e E) int64 { return seconds(get(e).GetProducedAtUnixNano()) }),
		str("episode_id", episode),
		val("step", func(e E) uint32 { return get(e).GetStep() }),
		enum("source", func(e E) eventspb.Source { return get(e).GetSource() }),
		fromRecord[E]("kafka_partition", func(r *Record) int32 { return r.Partition }),
		fromRecord[E]("kafka_offset", func(r *Record) int64 { return r.Offset }),
		fromRecord[E]("payload_bytes", func(r *Record) uint32 { return uint32(len(r.Value)) }),
		recordedAt[E](),
	}
}

// table is a Block filled by its fields.
type table[E any] struct {
	Block
	adds []func(E, *Record)
}

func newTable[E any](name string, fields ...[]field[E]) *table[E] {
	t := &table[E]{Block: Block{table: name}}
	for _, group := range fields {
		for _, f := range group {
			t.adds = append(t.adds, f(&t.Block))
		}
	}
	return t
}

// add appends one row.
func (t *table[E]) add(e E, rec *Record) {
	for _, add := range t.adds {
		add(e, rec)
	}
	t.rows++
}

// fields groups fields for newTable.
func fields[E any](f ...field[E]) []field[E] { return f }

// eventTable is the table of a topic's events.
type eventTable interface {
	topic() string
	block() *Block
	// addRecord decodes the record and adds its row.
	addRecord(rec *Record) error
}

type decodedTable[M any] struct {
	*table[M]
	name   string // the catalog topic
	decode func([]byte) (M, error)
}

// newEventTable is the table of the catalog topic's events, decoded by
// decode; its first columns are the envelope's.
func newEventTable[M interface{ GetEnvelope() *eventspb.Envelope }](topic string, decode func([]byte) (M, error), episode func(M) string, fields ...[]field[M]) eventTable {
	return decodedTable[M]{newTable(EventTables[topic], append([][]field[M]{envelope(M.GetEnvelope, episode)}, fields...)...), topic, decode}
}

func (t decodedTable[M]) topic() string { return t.name }
func (t decodedTable[M]) block() *Block { return &t.Block }

func (t decodedTable[M]) addRecord(rec *Record) error {
	ev, err := t.decode(rec.Value)
	if err != nil {
		return err
	}
	t.add(ev, rec)
	return nil
}
