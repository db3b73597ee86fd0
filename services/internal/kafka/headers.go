package kafka

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// EventHeaders is the one place records get their type headers: a produce
// hook, installed by Opts on every client of the process, that names each
// record's message type and schema version (eventspb.HeaderMessageType,
// HeaderSchemaVersion) from the catalog topic it is sent to. A generic
// consumer (analytics/python, any language) then decodes any topic without
// knowing the catalog. Records to topics outside the catalog (a replay's
// own output) and tombstones are left alone, and so is a record that
// already names its type (a copy keeps its producer's headers).
type EventHeaders struct {
	types map[string][]byte // full topic name -> message type
}

// NewEventHeaders returns the hook for the catalog's topics.
func NewEventHeaders(c *topics.Catalog) EventHeaders {
	// Looked up once per record produced: a map built once, no
	// allocation on the way.
	h := EventHeaders{types: map[string][]byte{}}
	for _, s := range c.Specs {
		if s.Message != "" {
			h.types[c.Name(s.Name)] = []byte(s.Message)
		}
	}
	return h
}

var schemaVersion = []byte(eventspb.SchemaVersionHeader)

// OnProduceRecordBuffered implements kgo.HookProduceRecordBuffered. franz-go
// calls it before it sizes or batches the record, so the headers added here
// are the ones sent.
func (h EventHeaders) OnProduceRecordBuffered(r *kgo.Record) {
	if r.Value == nil {
		return
	}
	typ, ok := h.types[r.Topic]
	if !ok {
		return
	}
	for _, hd := range r.Headers {
		if hd.Key == eventspb.HeaderMessageType {
			return
		}
	}
	r.Headers = append(r.Headers,
		kgo.RecordHeader{Key: eventspb.HeaderMessageType, Value: typ},
		kgo.RecordHeader{Key: eventspb.HeaderSchemaVersion, Value: schemaVersion})
}

var _ kgo.HookProduceRecordBuffered = EventHeaders{}
