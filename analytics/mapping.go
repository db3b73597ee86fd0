package analytics

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

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
		runOf[E](),
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
	// eventID decodes a record and returns its event id.
	eventID(value []byte) (string, error)
}

type decodedTable[M any] struct {
	*table[M]
	name   string // the catalog topic
	decode func([]byte) (M, error)
	id     func(M) string
	after  func(M, *Record) // when set, also given every decoded event (obs: frames)
}

// newEventTable is the table of the catalog topic's events, decoded by
// decode; its first columns are the envelope's.
func newEventTable[M interface{ GetEnvelope() *eventspb.Envelope }](topic string, decode func([]byte) (M, error), episode func(M) string, fields ...[]field[M]) eventTable {
	return decodedTable[M]{newTable(EventTables[topic], append([][]field[M]{envelope(M.GetEnvelope, episode)}, fields...)...), topic, decode,
		func(m M) string { return m.GetEnvelope().GetEventId() }, nil}
}

func (t decodedTable[M]) topic() string { return t.name }
func (t decodedTable[M]) block() *Block { return &t.Block }

func (t decodedTable[M]) eventID(value []byte) (string, error) {
	ev, err := t.decode(value)
	if err != nil {
		return "", err
	}
	return t.id(ev), nil
}

func (t decodedTable[M]) addRecord(rec *Record) error {
	ev, err := t.decode(rec.Value)
	if err != nil {
		return err
	}
	t.add(ev, rec)
	if t.after != nil {
		t.after(ev, rec)
	}
	return nil
}

// named are columns named as the event's own fields (proto names), read
// through the message's descriptor; the column type is the field's Go type
// (an enum is its Enum8 number, a bool a UInt8). A field renamed or
// derived on its way to a column is written out with str, val, flag or
// enum instead. It panics on a name the message lacks or a kind it does
// not map: NewRows runs every mapping, so a test catches either.
func named[E proto.Message](names ...string) []field[E] {
	return namedOf(func(e E) E { return e }, names...)
}

// namedOf is named for the fields of a message E holds (sub, which may
// return nil: its fields then read as their defaults).
func namedOf[E any, M proto.Message](sub func(E) M, names ...string) []field[E] {
	var zero M
	md := zero.ProtoReflect().Descriptor()
	out := make([]field[E], 0, len(names))
	for _, name := range names {
		fd := md.Fields().ByName(protoreflect.Name(name))
		if fd == nil || fd.IsList() || fd.IsMap() {
			panic("analytics: " + string(md.FullName()) + " has no scalar field " + name)
		}
		get := func(e E) protoreflect.Value { return sub(e).ProtoReflect().Get(fd) }
		var f field[E]
		switch fd.Kind() {
		case protoreflect.StringKind:
			f = str(name, func(e E) string { return get(e).String() })
		case protoreflect.BoolKind:
			f = flag(name, func(e E) bool { return get(e).Bool() })
		case protoreflect.EnumKind:
			f = val(name, func(e E) int8 { return int8(get(e).Enum()) })
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
			f = val(name, func(e E) int32 { return int32(get(e).Int()) })
		case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
			f = val(name, func(e E) int64 { return get(e).Int() })
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
			f = val(name, func(e E) uint32 { return uint32(get(e).Uint()) })
		case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			f = val(name, func(e E) uint64 { return get(e).Uint() })
		case protoreflect.FloatKind:
			f = val(name, func(e E) float32 { return float32(get(e).Float()) })
		case protoreflect.DoubleKind:
			f = val(name, func(e E) float64 { return get(e).Float() })
		default:
			panic("analytics: " + string(fd.FullName()) + " has no column type for kind " + fd.Kind().String())
		}
		out = append(out, f)
	}
	return out
}
