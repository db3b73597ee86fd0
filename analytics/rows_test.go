package analytics_test

import (
	"errors"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

func TestRowsAddAndMerge(t *testing.T) {
	items := analyticstest.Dataset("p.")
	a, b := analytics.NewRows(), analytics.NewRows()
	bad := 0
	for i := range items {
		dst := a
		if i%2 == 1 {
			dst = b
		}
		if err := dst.Add(items[i].Topic, &items[i].Record); err != nil {
			var de *eventspb.DecodeError
			if !errors.As(err, &de) || de.Reason != eventspb.ReasonCode_REASON_CODE_DECODE_ERROR {
				t.Fatalf("undecodable record: error %v, want a DecodeError with REASON_CODE_DECODE_ERROR", err)
			}
			bad++
		}
	}
	if bad != 2 {
		t.Fatalf("%d undecodable records, want 2", bad)
	}
	// The joiner's inputs are also archived in event_log, decodable or not.
	inputs := 0
	for _, it := range items {
		switch it.Topic {
		case "obs", "actions", "rewards":
			inputs++
		}
	}
	total := a.Len() + b.Len()
	a.Merge(b)
	if a.Len() != total || a.Len() != len(items)+inputs {
		t.Fatalf("merged %d rows, want %d", a.Len(), len(items)+inputs)
	}
	want := map[string]int{"actions": 15, "obs": 3, "rewards": 8, "telemetry": 3, "tasks": 2, "transitions": 2,
		"episodes": 10, "weights": 3, "dead_letters": 1, "bad_records": 2, "event_log": inputs}
	got := a.Counts()
	for table, n := range want {
		if got[table] != n {
			t.Errorf("%s: %d rows, want %d", table, got[table], n)
		}
	}
	if err := a.Add("no-such-topic", &items[0].Record); eventspb.ReasonCodeOf(err) != eventspb.ReasonCode_REASON_CODE_UNKNOWN_TYPE {
		t.Errorf("unknown topic: %v, want REASON_CODE_UNKNOWN_TYPE", err)
	}
	if a.Counts()["bad_records"] != 3 {
		t.Error("a record of an unknown topic was not kept in bad_records")
	}
	a.Reset()
	if a.Len() != 0 {
		t.Errorf("Reset left %d rows", a.Len())
	}
}

func TestEventID(t *testing.T) {
	ev := &eventspb.Telemetry{Envelope: eventspb.NewEnvelope("test"), ActorId: "a"}
	b, err := eventspb.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := analytics.EventID(topics.Telemetry, b); err != nil || id != ev.GetEnvelope().GetEventId() {
		t.Fatalf("EventID = %q, %v; want %q", id, err, ev.GetEnvelope().GetEventId())
	}
	if _, err := analytics.EventID(topics.Telemetry, []byte{0xff, 0xff}); err == nil {
		t.Fatal("undecodable bytes gave an event id")
	}
	if _, err := analytics.EventID("joiner-changelog", b); err == nil {
		t.Fatal("a topic without an event type gave an event id")
	}
}
