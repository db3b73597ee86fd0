package eventspb

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewEnvelope(t *testing.T) {
	before := time.Now()
	e := NewEnvelope("actor-3")
	after := time.Now()

	if e.GetProducer() != "actor-3" || e.GetSchemaVersion() != SchemaVersion {
		t.Fatalf("producer/schema version = %q/%d", e.GetProducer(), e.GetSchemaVersion())
	}
	if at := e.GetProducedAtUnixNano(); at < before.UnixNano() || at > after.UnixNano() {
		t.Fatalf("produced_at %d outside [%d, %d]", at, before.UnixNano(), after.UnixNano())
	}
	if !uuidV7.MatchString(e.GetEventId()) {
		t.Fatalf("event id %q is not a UUIDv7", e.GetEventId())
	}
	// The first 48 bits are the creation time in milliseconds.
	raw, err := hex.DecodeString(strings.ReplaceAll(e.GetEventId(), "-", "")[:12])
	if err != nil {
		t.Fatal(err)
	}
	var ms int64
	for _, b := range raw {
		ms = ms<<8 | int64(b)
	}
	if ms < before.UnixMilli() || ms > after.UnixMilli() {
		t.Fatalf("event id time %d outside [%d, %d]", ms, before.UnixMilli(), after.UnixMilli())
	}
}

func TestNewEventIDUnique(t *testing.T) {
	seen := make(map[string]bool)
	for range 10000 {
		id := NewEventID()
		if seen[id] {
			t.Fatalf("duplicate event id %q", id)
		}
		seen[id] = true
	}
}

func TestRoundTripEveryEvent(t *testing.T) {
	for _, ev := range testEvents() {
		name := typeName(ev)
		t.Run(name, func(t *testing.T) {
			b, err := Marshal(ev)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			got, err := decoders[name](b)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !proto.Equal(ev, got) {
				t.Fatalf("round trip changed the event:\nwant %v\ngot  %v", ev, got)
			}
		})
	}
}

func TestTransitionDoneWithoutNextObs(t *testing.T) {
	tr := testTransition()
	tr.NextObsEventId, tr.NextObsTopic, tr.NextObsPartition, tr.NextObsOffset = "", "", 0, 0
	tr.Done = true
	b, err := Marshal(tr)
	if err != nil {
		t.Fatalf("terminal transition rejected: %v", err)
	}
	if _, err := DecodeTransition(b); err != nil {
		t.Fatalf("terminal transition rejected: %v", err)
	}
}

// A transition written before next_obs_event_id (issue 18) embeds s_t+1
// whole: it still decodes, and NextObsEventID names its next state.
func TestTransitionWithEmbeddedNextObs(t *testing.T) {
	tr := testTransition()
	tr.NextObsEventId, tr.NextObsTopic, tr.NextObsPartition, tr.NextObsOffset = "", "", 0, 0
	tr.NextObs = testObservation(3)
	b, err := Marshal(tr)
	if err != nil {
		t.Fatalf("transition with an embedded next_obs rejected: %v", err)
	}
	got, err := DecodeTransition(b)
	if err != nil {
		t.Fatalf("transition with an embedded next_obs rejected: %v", err)
	}
	if id, want := NextObsEventID(got), tr.NextObs.GetEnvelope().GetEventId(); id != want || id == "" {
		t.Fatalf("NextObsEventID = %q, want the embedded next_obs' %q", id, want)
	}
	if cur := testTransition(); NextObsEventID(cur) != cur.GetNextObsEventId() || cur.GetNextObsEventId() == "" {
		t.Fatalf("NextObsEventID = %q, want next_obs_event_id %q", NextObsEventID(cur), cur.GetNextObsEventId())
	}
}

func TestDecodeErrors(t *testing.T) {
	invalidUTF8 := withRawURL(t, testObservation(1), "http://x/\xff")

	tests := []struct {
		name   string
		typ    string
		msg    proto.Message // encoded without validation; nil uses raw
		raw    []byte
		reason ReasonCode
		want   string
	}{
		{name: "garbage", typ: "Observation", raw: []byte{0xff, 0xff, 0xff}, reason: ReasonCode_REASON_CODE_DECODE_ERROR, want: "cannot parse"},
		{name: "invalid utf8", typ: "Observation", raw: invalidUTF8, reason: ReasonCode_REASON_CODE_DECODE_ERROR, want: "UTF-8"},
		{name: "empty record", typ: "Reward", raw: []byte{}, reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "envelope is missing"},
		{name: "no event id", typ: "Task", msg: func() proto.Message { m := testTask(); m.Envelope.EventId = ""; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "envelope.event_id is empty"},
		{name: "no schema version", typ: "Telemetry", msg: func() proto.Message { m := testTelemetry(); m.Envelope.SchemaVersion = 0; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "schema_version is 0"},
		{name: "unknown source", typ: "Episode", msg: func() proto.Message { m := testEpisode(); m.Envelope.Source = 9; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "envelope.source: unknown Source value 9"},
		{name: "unknown action type", typ: "Action", msg: func() proto.Message { m := testAction(1); m.Type = 99; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "type: unknown ActionType value 99"},
		{name: "unspecified action type", typ: "Action", msg: func() proto.Message { m := testAction(1); m.Type = 0; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "type is ACTION_TYPE_UNSPECIFIED"},
		{name: "nested unknown enum", typ: "Transition", msg: func() proto.Message { m := testTransition(); m.Obs.Task.Tier = 42; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "obs.task.tier: unknown Tier value 42"},
		{name: "lm tokens misaligned", typ: "Action", msg: func() proto.Message {
			m := testAction(1)
			m.Lm = &LMOutput{Tokens: []string{"a", "b"}, TokenLogprobs: []float32{-1}}
			return m
		}(), reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "lm.tokens: 2 texts, 0 ids, 1 log-probs"},
		{name: "lm positive log-prob", typ: "Action", msg: func() proto.Message {
			m := testAction(1)
			m.Lm = &LMOutput{Tokens: []string{"a"}, TokenIds: []int32{5}, TokenLogprobs: []float32{0.5}}
			return m
		}(), reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "lm.token_logprobs[0] is 0.5 > 0"},
		{name: "NaN log prob", typ: "Action", msg: func() proto.Message { m := testAction(1); m.LogProb = math.NaN(); return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "log_prob is not finite"},
		{name: "infinite reward", typ: "Reward", msg: func() proto.Message { m := testReward(); m.Reward = math.Inf(1); return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "reward is not finite"},
		{name: "observation without episode", typ: "Observation", msg: func() proto.Message { m := testObservation(1); m.Envelope.EpisodeId = ""; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "envelope.episode_id is empty"},
		{name: "transition without action", typ: "Transition", msg: func() proto.Message { m := testTransition(); m.Action = nil; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "action is missing"},
		{name: "transition nested action unspecified", typ: "Transition", msg: func() proto.Message { m := testTransition(); m.Action.Type = 0; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "action.type is ACTION_TYPE_UNSPECIFIED"},
		{name: "transition without next state", typ: "Transition", msg: func() proto.Message { m := testTransition(); m.NextObsEventId = ""; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "next_obs_event_id is missing and done is false"},
		{name: "transition envelope mismatch", typ: "Transition", msg: func() proto.Message { m := testTransition(); m.Envelope.Step = 9; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "differ from"},
		{name: "weights without onnx", typ: "Weights", msg: func() proto.Message { m := testWeights(); m.Onnx = nil; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "onnx is empty"},
		{name: "dead letter without reason", typ: "DeadLetter", msg: func() proto.Message { m := testDeadLetter(); m.ReasonCode = 0; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "reason_code is REASON_CODE_UNSPECIFIED"},
		{name: "task without id", typ: "Task", msg: func() proto.Message { m := testTask(); m.TaskId = ""; return m }(),
			reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, want: "task_id is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.raw
			if tt.msg != nil {
				var err error
				if b, err = proto.Marshal(tt.msg); err != nil {
					t.Fatal(err)
				}
			}
			got, err := decoders[tt.typ](b)
			if err == nil {
				t.Fatalf("decoded %v, want error", got)
			}
			de, ok := errors.AsType[*DecodeError](err)
			if !ok {
				t.Fatalf("error %T %v is not a *DecodeError", err, err)
			}
			if de.Type != tt.typ || de.Reason != tt.reason || ReasonCodeOf(err) != tt.reason {
				t.Fatalf("got type %q reason %v, want %q %v", de.Type, de.Reason, tt.typ, tt.reason)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "unable to decode "+tt.typ+": ") || !strings.Contains(msg, tt.want) {
				t.Fatalf("error %q, want prefix %q and %q", msg, "unable to decode "+tt.typ+": ", tt.want)
			}
			if tt.msg != nil && tt.reason == ReasonCode_REASON_CODE_SCHEMA_INVALID {
				if _, err := Marshal(tt.msg); err == nil || !strings.HasPrefix(err.Error(), "unable to marshal "+tt.typ+": ") {
					t.Fatalf("Marshal of an invalid event: err = %v", err)
				}
			}
		})
	}
}

// withRawURL encodes obs with url (field 15) appended as raw bytes, because
// proto.Marshal refuses invalid UTF-8.
func withRawURL(t *testing.T, obs *Observation, url string) []byte {
	t.Helper()
	b, err := proto.Marshal(obs)
	if err != nil {
		t.Fatal(err)
	}
	b = protowire.AppendTag(b, 15, protowire.BytesType)
	return protowire.AppendString(b, url)
}

func TestReasonCodeOfOtherErrors(t *testing.T) {
	if got := ReasonCodeOf(errors.New("boom")); got != ReasonCode_REASON_CODE_OTHER {
		t.Fatalf("ReasonCodeOf(plain error) = %v", got)
	}
}

// A consumer built from an older schema must pass newer fields through.
func TestDecodeKeepsUnknownFields(t *testing.T) {
	b, err := Marshal(testObservation(1))
	if err != nil {
		t.Fatal(err)
	}
	b = protowire.AppendTag(b, 999, protowire.BytesType)
	b = protowire.AppendString(b, "added later")

	obs, err := DecodeObservation(b)
	if err != nil {
		t.Fatalf("decode with an unknown field: %v", err)
	}
	again, err := Marshal(obs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(again, []byte("added later")) {
		t.Fatal("re-encoding dropped the unknown field")
	}
}

func TestMarshalIsDeterministic(t *testing.T) {
	w := testWeights()
	for i := range 10 {
		w.Metrics[string(rune('a'+i))] = float64(i)
	}
	first, err := Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		b, err := Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, b) {
			t.Fatal("two encodings of the same event differ")
		}
	}
}
