package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestEventHeaders produces through a client built by Opts, as every
// service's is, and reads the records back: each record to a catalog topic
// names its message type and schema version, and a consumer that knows only
// the headers decodes it (eventspb.DecodeNamed); a tombstone, a topic
// outside the catalog and a record that already names its type are left
// as they were.
func TestEventHeaders(t *testing.T) {
	c := kafkatest.Fake(t, "hdr.")
	opts, err := Opts(&config.Config{InstanceID: "t", TopicPrefix: "hdr."}, c.Seeds, "t/headers", nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := kadm.NewClient(c.Admin).CreateTopic(ctx, 1, 1, nil, "hdr.unknown"); err != nil {
		t.Fatal(err)
	}

	obs := &eventspb.Observation{Envelope: eventspb.NewEnvelope("test"), Url: "http://x/"}
	obs.Envelope.EpisodeId = "ep-1"
	value, err := eventspb.Marshal(obs)
	if err != nil {
		t.Fatal(err)
	}
	copied := kgo.RecordHeader{Key: eventspb.HeaderMessageType, Value: []byte("asyncwebrl.v1.Action")}
	recs := []*kgo.Record{
		{Topic: c.Catalog.Name(topics.Obs), Key: []byte("ep-1"), Value: value},
		{Topic: c.Catalog.Name(topics.JoinerChangelog), Key: []byte("ep-1")}, // a tombstone
		{Topic: "hdr.unknown", Value: []byte("x")},
		{Topic: c.Catalog.Name(topics.Actions), Value: []byte("copied"), Headers: []kgo.RecordHeader{copied}},
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	got := map[string]*kgo.Record{}
	rd, err := c.NewClient(kgo.ConsumeTopics(recs[0].Topic, recs[1].Topic, recs[2].Topic, recs[3].Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for len(got) < len(recs) {
		fs := rd.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got[r.Topic] = r })
	}
	headers := func(r *kgo.Record) map[string]string {
		m := map[string]string{}
		for _, h := range r.Headers {
			if _, dup := m[h.Key]; dup {
				t.Errorf("%s: header %s set twice", r.Topic, h.Key)
			}
			m[h.Key] = string(h.Value)
		}
		return m
	}

	h := headers(got[recs[0].Topic])
	if h[eventspb.HeaderMessageType] != "asyncwebrl.v1.Observation" || h[eventspb.HeaderSchemaVersion] != "1" {
		t.Fatalf("obs record headers %v, want its type and schema version 1", h)
	}
	m, err := eventspb.DecodeNamed(h[eventspb.HeaderMessageType], got[recs[0].Topic].Value)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := m.(*eventspb.Observation); !ok || o.GetUrl() != "http://x/" || o.GetEnvelope().GetEpisodeId() != "ep-1" {
		t.Fatalf("decoded by its header: %T %v", m, m)
	}
	for _, r := range recs[1:3] {
		if h := headers(got[r.Topic]); len(h) != 0 {
			t.Errorf("%s got headers %v, want none", r.Topic, h)
		}
	}
	if h := headers(got[recs[3].Topic]); len(h) != 1 || h[eventspb.HeaderMessageType] != "asyncwebrl.v1.Action" {
		t.Errorf("a record that names its type got headers %v, want its own only", h)
	}

	// Unknown names are refused, not guessed.
	if _, err := eventspb.DecodeNamed("google.protobuf.Empty", nil); err == nil {
		t.Error("DecodeNamed decoded a message outside asyncwebrl.v1")
	}
	if _, err := eventspb.DecodeNamed("asyncwebrl.v1.Observation", []byte{0xff}); err == nil {
		t.Error("DecodeNamed accepted bytes that are no Observation")
	}
}
