package loadtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// fakeCluster starts the in-process cluster (kafkatest) for the test and
// returns a client constructor for it and a context that ends after a
// minute.
func fakeCluster(t *testing.T) (joiner.ClientFunc, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return kafkatest.StartFake(t).NewClient, ctx
}

// fakeTopics is fakeCluster with a catalog of prefix and partitions applied
// to it, and a client of the cluster (closed with the test).
func fakeTopics(t *testing.T, prefix string, partitions int32) (joiner.ClientFunc, context.Context, *topics.Catalog, *kgo.Client) {
	t.Helper()
	newClient, ctx := fakeCluster(t)
	cat := topics.New(topics.WithPrefix(prefix), topics.WithPartitions(partitions))
	cl, err := newClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	if _, err := topics.Apply(ctx, cl, cat); err != nil {
		t.Fatal(err)
	}
	return newClient, ctx, cat, cl
}

// joinOffline joins the generated input with joiner machines (no service)
// and writes what they produce, as a perfect joiner would.
func joinOffline(t *testing.T, ctx context.Context, newClient joiner.ClientFunc, cat *topics.Catalog, partitions int32) {
	t.Helper()
	machines := map[int32]*joiner.Machine{}
	for p := range partitions {
		m, err := joiner.NewMachine(p, joiner.DefaultSettings())
		if err != nil {
			t.Fatal(err)
		}
		machines[p] = m
	}
	for _, in := range []struct {
		topic string
		kind  joiner.Kind
	}{{cat.Name(topics.Obs), joiner.KindObs}, {cat.Name(topics.Actions), joiner.KindAction}, {cat.Name(topics.Rewards), joiner.KindReward}} {
		err := joiner.ReadCommitted(ctx, newClient, in.topic, nil, func(r *kgo.Record) error {
			machines[r.Partition].Apply(joiner.Record{Kind: in.kind, Value: r.Value, Source: joiner.Source{
				Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Timestamp: r.Timestamp.UnixNano()}})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	cl, err := newClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for p := range partitions {
		out, err := machines[p].Take()
		if err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for i, tr := range out.Transitions {
			b, err := out.MarshalTransition(i, 0)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, &kgo.Record{Topic: cat.Name(topics.Transitions), Key: []byte(tr.EpisodeId), Value: b})
		}
		for _, e := range out.Episodes {
			recs = append(recs, &kgo.Record{Topic: cat.Name(topics.Episodes), Key: []byte(e.TaskId), Value: mustMarshal(t, e)})
		}
		for _, d := range out.DeadLetters {
			recs = append(recs, &kgo.Record{Topic: cat.Name(topics.DLQ), Key: []byte(d.SourceTopic), Value: mustMarshal(t, d)})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

func mustMarshal(t *testing.T, ev eventspb.Event) []byte {
	t.Helper()
	b, err := eventspb.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGenerateAndVerify checks the two halves against each other: the
// output of a perfect join of the generated load verifies, and the
// verifier notices a duplicate, a loss, a misjoin and a malformed record
// missing from the dlq.
func TestGenerateAndVerify(t *testing.T) {
	newClient, ctx, cat, cl := fakeTopics(t, "v.", 3)

	load := DefaultConfig(5000)
	load.Steps = 3
	progress := 0
	load.Progress = func(sent, total int) { progress = max(progress, sent) }
	exp, err := Generate(ctx, cl, cat, load)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Records < 4900 || exp.Records > 5100 || progress == 0 {
		t.Fatalf("asked for 5000 records, produced %d (progress %d)", exp.Records, progress)
	}
	if exp.Duplicates == 0 || exp.Reordered == 0 || len(exp.Malformed) == 0 {
		t.Fatalf("load not spoiled: %+v", exp)
	}
	if len(exp.Transitions) != len(exp.Episodes)*load.Steps {
		t.Fatalf("%d transitions expected for %d episodes of %d steps", len(exp.Transitions), len(exp.Episodes), load.Steps)
	}

	joinOffline(t, ctx, newClient, cat, 3)
	rep, err := Verify(ctx, newClient, cat, exp)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Found != len(exp.Transitions) || rep.MalformedInDLQ != len(exp.Malformed) {
		t.Fatalf("a perfect join does not verify: %s", rep)
	}

	// Spoil the picture: the verifier must notice each problem. First a
	// duplicate: the first transition of partition 0, written again.
	var dup *kgo.Record
	if err := joiner.ReadCommitted(ctx, newClient, cat.Name(topics.Transitions), []int32{0}, func(r *kgo.Record) error {
		if dup == nil {
			dup = &kgo.Record{Topic: r.Topic, Partition: r.Partition, Key: r.Key, Value: r.Value}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, dup).FirstErr(); err != nil {
		t.Fatal(err)
	}
	dupTr, err := eventspb.DecodeTransition(dup.Value)
	if err != nil {
		t.Fatal(err)
	}
	var others []StepKey
	for k := range exp.Transitions {
		if k.Episode != dupTr.EpisodeId {
			others = append(others, k)
		}
	}
	slices.SortFunc(others, func(a, b StepKey) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	unexpected, misjoined := others[0], others[1]
	exp.Transitions[StepKey{"never-generated", 0}] = StepIDs{} // lost
	w := exp.Transitions[misjoined]
	w.Action = "some-other-action"
	exp.Transitions[misjoined] = w
	delete(exp.Transitions, unexpected) // its transition is now unexpected
	exp.Malformed = append(exp.Malformed, Malformed{Topic: cat.Name(topics.Obs), Partition: 0, Offset: 1 << 40})
	rep, err = Verify(ctx, newClient, cat, exp)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Lost != 1 || rep.Unexpected != 1 || rep.Mismatched != 1 || rep.Duplicated != 1 || rep.MalformedInDLQ != rep.MalformedExpected-1 {
		t.Fatalf("the verifier missed a planted problem: %s", rep)
	}
	if dupTr.EpisodeId == "" {
		t.Fatal("no duplicate planted")
	}
}
