package analytics

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestRowsGolden is the recorder's row mapping as a specification
// (testdata/rows): one record in, the ClickHouse rows it becomes out, every
// column by name. Rewrite with `go test ./analytics -run RowsGolden -rewrite`
// after a deliberate change, and read the diff.
//
//	add topic=T [partition=P] [offset=O] [key=K] [ts=RFC3339]
//	<the event as protobuf text>
//	add-raw topic=T ...
//	<the record value verbatim (need not decode)>
//
// recorded_at is 2024-01-02T03:04:05Z for every record; the Kafka timestamp
// defaults to 2024-01-02T03:04:00Z.
func TestRowsGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/rows", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var topic string
			d.ScanArgs(t, "topic", &topic)
			rec := &Record{
				Topic:      "run1." + topic,
				Run:        "run1.",
				Timestamp:  time.Date(2024, 1, 2, 3, 4, 0, 0, time.UTC),
				RecordedAt: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
			}
			if d.HasArg("partition") {
				var p int
				d.ScanArgs(t, "partition", &p)
				rec.Partition = int32(p)
			}
			if d.HasArg("offset") {
				var o int
				d.ScanArgs(t, "offset", &o)
				rec.Offset = int64(o)
			}
			if d.HasArg("key") {
				var k string
				d.ScanArgs(t, "key", &k)
				rec.Key = []byte(k)
			}
			if d.HasArg("ts") {
				var ts string
				d.ScanArgs(t, "ts", &ts)
				at, err := time.Parse(time.RFC3339Nano, ts)
				if err != nil {
					d.Fatalf(t, "ts: %v", err)
				}
				rec.Timestamp = at
			}
			switch d.Cmd {
			case "add":
				ev := newEvent(topic)
				if ev == nil {
					d.Fatalf(t, "no event type for topic %q", topic)
				}
				if err := prototext.Unmarshal([]byte(d.Input), ev); err != nil {
					d.Fatalf(t, "unable to parse the event: %v", err)
				}
				b, err := proto.MarshalOptions{Deterministic: true}.Marshal(ev)
				if err != nil {
					d.Fatalf(t, "unable to encode the event: %v", err)
				}
				rec.Value = b
			case "add-raw":
				rec.Value = []byte(d.Input)
			default:
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			rows := NewRows()
			var out strings.Builder
			if err := rows.Add(topic, rec); err != nil {
				fmt.Fprintf(&out, "error: %s\n", stableText(err.Error()))
			}
			out.WriteString(dumpRows(rows, rec))
			return out.String()
		})
	})
}

func newEvent(topic string) proto.Message {
	switch topic {
	case topics.Tasks:
		return &eventspb.Task{}
	case topics.Obs:
		return &eventspb.Observation{}
	case topics.Actions:
		return &eventspb.Action{}
	case topics.Rewards:
		return &eventspb.Reward{}
	case topics.Telemetry:
		return &eventspb.Telemetry{}
	case topics.Transitions:
		return &eventspb.Transition{}
	case topics.Episodes:
		return &eventspb.Episode{}
	case topics.Weights:
		return &eventspb.Weights{}
	case topics.DLQ:
		return &eventspb.DeadLetter{}
	}
	return nil
}

// dumpRows prints every buffered row, a table at a time in insert order,
// one "column: value" line per column. A column holding the record's value
// byte for byte says so rather than print the protobuf bytes.
func dumpRows(r *Rows, rec *Record) string {
	var out strings.Builder
	for _, b := range r.blocks {
		for i := range b.rows {
			fmt.Fprintf(&out, "%s row %d:\n", b.table, i)
			for _, c := range b.cols {
				v := reflect.ValueOf(c.values()).Index(i)
				s := formatValue(v)
				if v.Kind() == reflect.String && len(rec.Value) > 0 && v.String() == string(rec.Value) {
					s = fmt.Sprintf("<the record's value, %d bytes>", len(rec.Value))
				}
				fmt.Fprintf(&out, "  %s: %s\n", c.name(), s)
			}
		}
	}
	return out.String()
}

func formatValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "NULL"
		}
		return formatValue(v.Elem())
	case reflect.String:
		return strconv.Quote(stableText(v.String()))
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = formatValue(v.Index(i))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case reflect.Float32:
		return strconv.FormatFloat(v.Float(), 'g', -1, 32)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return fmt.Sprint(v.Interface())
}

// stableText undoes protobuf-go's deliberate instability: its error texts
// randomly use a non-breaking space after "proto:" (per binary) so that
// nobody matches them; a golden file has to.
func stableText(s string) string { return strings.ReplaceAll(s, "proto:\u00a0", "proto: ") }
