package learner

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

func TestLightTransitionFieldNumbers(t *testing.T) {
	tr := (&eventspb.Transition{}).ProtoReflect().Descriptor().Fields()
	obs := (&eventspb.Observation{}).ProtoReflect().Descriptor().Fields()
	for _, c := range []struct {
		got  protowire.Number
		name string
		num  protowire.Number
	}{
		{trObs, "obs", tr.ByName("obs").Number()},
		{trNextObs, "next_obs", tr.ByName("next_obs").Number()},
		{obsFrame, "frame", obs.ByName("frame").Number()},
		{obsElements, "elements", obs.ByName("elements").Number()},
	} {
		if c.got != c.num {
			t.Errorf("%s is field %d, the light decode strips %d", c.name, c.num, c.got)
		}
	}
}

// lightCases are transition records: the actors' shape, then the shapes a
// decoder must get right too (next_obs of old records, obs twice, unknown
// fields, fields in another order). small ones (a 16-byte frame, 4
// elements) are the fuzzer's seeds.
func lightCases(t testing.TB, small bool) map[string][]byte {
	tr, err := eventspb.DecodeTransition(benchTransition(t, eventspb.Split_SPLIT_TEST, 3))
	if err != nil {
		t.Fatal(err)
	}
	if small {
		tr.Obs.Frame, tr.Obs.Elements = tr.Obs.Frame[:16], tr.Obs.Elements[:4]
	}
	plain, err := eventspb.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	old := proto.Clone(tr).(*eventspb.Transition)
	old.NextObs = proto.Clone(tr.Obs).(*eventspb.Observation)
	old.NextObs.Elements = old.NextObs.Elements[:3]
	withNext, err := eventspb.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	// A second obs merges into the first: two more elements, a new frame.
	more := &eventspb.Observation{Frame: []byte("second frame"), Elements: []*eventspb.Element{{Bid: "x"}, {Bid: "y", Box: &eventspb.Box{W: 1}}}}
	mb, err := proto.Marshal(&eventspb.Transition{Obs: more})
	if err != nil {
		t.Fatal(err)
	}
	unknown := protowire.AppendTag(nil, 99, protowire.BytesType)
	unknown = protowire.AppendBytes(unknown, []byte("from a newer schema"))
	obsUnknown := protowire.AppendTag(nil, trObs, protowire.BytesType)
	obsUnknown = protowire.AppendBytes(obsUnknown, protowire.AppendVarint(protowire.AppendTag(nil, 77, protowire.VarintType), 5))
	return map[string][]byte{
		"plain":         plain,
		"next_obs":      withNext,
		"obs twice":     append(append([]byte(nil), plain...), mb...),
		"unknown":       append(append(append([]byte(nil), unknown...), plain...), obsUnknown...),
		"obs first too": append(append([]byte(nil), mb...), plain...),
	}
}

func TestLightTransitionMatchesFull(t *testing.T) {
	for _, small := range []bool{false, true} {
		for name, b := range lightCases(t, small) {
			checkLight(t, name, b, true)
		}
	}
}

// checkLight checks the light decode of b against the full one: when it
// vouches for b, b decodes, to the same fields without frames and
// elements, and full() completes it to exactly the full decode.
func checkLight(t *testing.T, name string, b []byte, mustVouch bool) {
	t.Helper()
	lt, ok := lightTransition(b)
	want, err := eventspb.DecodeTransition(b)
	if !ok {
		if mustVouch {
			t.Fatalf("%s: the light decode refused it (full decode: %v)", name, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: the light decode vouched for a record the full decode refuses: %v", name, err)
	}
	stripped := proto.Clone(want).(*eventspb.Transition)
	for _, o := range []*eventspb.Observation{stripped.Obs, stripped.NextObs} {
		if o != nil {
			o.Frame, o.Elements = nil, nil
		}
	}
	if !proto.Equal(lt.tr, stripped) {
		t.Fatalf("%s: light decode\n%v\nwant\n%v", name, lt.tr, stripped)
	}
	got, ok := lt.full()
	if !ok || !proto.Equal(got, want) {
		t.Fatalf("%s: completed light decode (%v)\n%v\nwant\n%v", name, ok, got, want)
	}
}

// TestLightTransitionRefusesMalformed: records the full decode refuses
// are refused, so that ingest decodes them in full and dead-letters them
// as before, held out or not.
func TestLightTransitionRefusesMalformed(t *testing.T) {
	tr, err := eventspb.DecodeTransition(benchTransition(t, eventspb.Split_SPLIT_TEST, 3))
	if err != nil {
		t.Fatal(err)
	}
	marshal := func(fn func(*eventspb.Transition)) []byte {
		c := proto.Clone(tr).(*eventspb.Transition)
		fn(c)
		b, err := proto.Marshal(c) // not eventspb.Marshal: these are invalid
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	truncated := marshal(func(*eventspb.Transition) {})
	for name, b := range map[string][]byte{
		"garbage":                  []byte("garbage"),
		"truncated":                truncated[:len(truncated)-7],
		"element text not UTF-8":   append(marshal(func(*eventspb.Transition) {}), badElement()...),
		"element cut short":        append(marshal(func(*eventspb.Transition) {}), obsField(obsElements, []byte{0x0a, 0x09})...),
		"unknown split":            marshal(func(c *eventspb.Transition) { c.Obs.Task.Split = 42 }),
		"no event id":              marshal(func(c *eventspb.Transition) { c.Envelope.EventId = "" }),
		"reward not finite":        marshal(func(c *eventspb.Transition) { c.Reward = 1 / zero() }),
		"no obs":                   marshal(func(c *eventspb.Transition) { c.Obs = nil }),
		"obs instruction not UTF8": append(marshal(func(*eventspb.Transition) {}), obsField(16, []byte("\xff"))...),
	} {
		if _, err := eventspb.DecodeTransition(b); err == nil {
			t.Fatalf("%s: the full decode takes it; the case is wrong", name)
		}
		if _, ok := lightTransition(b); ok {
			t.Errorf("%s: the light decode vouched for it", name)
		}
	}
}

func zero() float64 { return 0 }

// obsField is a transition's encoding holding one obs field of number num
// and bytes v (merged into the obs of the record it is appended to).
func obsField(num protowire.Number, v []byte) []byte {
	o := protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), v)
	return protowire.AppendBytes(protowire.AppendTag(nil, trObs, protowire.BytesType), o)
}

// badElement is one more obs element whose text is not UTF-8.
func badElement() []byte {
	el := protowire.AppendTag(nil, 3, protowire.BytesType) // text
	return obsField(obsElements, protowire.AppendBytes(el, []byte("\xff\xfe not UTF-8")))
}

// TestIngestFiltersBeforeFullDecode: held out, stale and trained records
// meet the same fates as before; malformed ones are dead-lettered with the
// full decode's code, also when they are held out.
func TestIngestFiltersBeforeFullDecode(t *testing.T) {
	s, err := New(nil, nil, topics.New(), WithMaxPolicyLag(2))
	if err != nil {
		t.Fatal(err)
	}
	s.arch = s.o.arch
	s.version.Store(10)
	if s.producer, err = kgo.NewClient(kgo.SeedBrokers("127.0.0.1:1")); err != nil {
		t.Fatal(err)
	}
	defer s.producer.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // dead letters fail fast; their count is what is checked
	heldOut := benchTransition(t, eventspb.Split_SPLIT_TEST, 10)
	badHeldOut := append(append([]byte(nil), heldOut...), badElement()...)
	for _, b := range [][]byte{heldOut, benchTransition(t, eventspb.Split_SPLIT_TRAIN, 1), benchTransition(t, eventspb.Split_SPLIT_TRAIN, 10), badHeldOut, []byte("garbage")} {
		s.ingest(ctx, &kgo.Record{Topic: "transitions", Value: b}, time.Now())
	}
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"consumed", testutil.ToFloat64(s.m.consumed), 3},
		{"held out", testutil.ToFloat64(s.m.skipped.WithLabelValues("held_out")), 1},
		{"stale", testutil.ToFloat64(s.m.skipped.WithLabelValues("stale")), 1},
		{"decode errors", testutil.ToFloat64(s.m.deadLetters.WithLabelValues(eventspb.ReasonCode_REASON_CODE_DECODE_ERROR.String())), 2},
		{"trained", float64(s.ingested.Load()), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

// FuzzLightTransition: whatever the light decode vouches for, the full
// decode takes, with the same fields.
func FuzzLightTransition(f *testing.F) {
	for _, b := range lightCases(f, true) {
		f.Add(b)
	}
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkLight(t, "fuzzed", b, false)
	})
}
