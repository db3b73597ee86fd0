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
type EventHeaders struct{ catalog *topics.Catalog }

// NewEventHeaders returns the hook for the catalog's topics.
func NewEventHeaders(c *topics.Catalog) EventHeaders { return EventHeaders{catalog: c} }

// OnProduceRecordBuffered implements kgo.HookProduceRecordBuffered. franz-go
// calls it before it sizes or batches the record, so the headers added here
// are the ones sent.
func (h EventHeaders) OnProduceRecordBuffered(r *kgo.Record) {
	if r.Value == nil {
		return
	}
	typ := h.catalog.MessageType(r.Topic)
	if typ == "" {
		return
	}
	for _, hd := range r.Headers {
		if hd.Key == eventspb.HeaderMessageType {
			return
		}
	}
	r.Headers = append(r.Headers,
		kgo.RecordHeader{Key: eventspb.HeaderMessageType, Value: []byte(typ)},
		kgo.RecordHeader{Key: eventspb.HeaderSchemaVersion, Value: []byte(eventspb.SchemaVersionHeader)})
}

var _ kgo.HookProduceRecordBuffered = EventHeaders{}
