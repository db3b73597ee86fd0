package loadtest

import (
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestVerifyInputsAndStop: a load stopped early still yields whole
// episodes, every acknowledged record verifies in place, and the verifier
// notices an acknowledged record missing from the log (lost) and a record
// nobody acknowledged (duplicated).
func TestVerifyInputsAndStop(t *testing.T) {
	newClient, ctx, cat, cl := fakeTopics(t, "in.", 3)
	load := DefaultConfig(1 << 30) // stopped long before
	load.Steps = 3
	stop := make(chan struct{})
	load.Stop = stop
	var once sync.Once
	load.Progress = func(sent, _ int) { // called by every executor
		if sent >= 2000 {
			once.Do(func() { close(stop) })
		}
	}
	exp, err := Generate(ctx, cl, cat, load)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Records < 2000 || exp.Records > 10000 || len(exp.Transitions) != len(exp.Episodes)*load.Steps {
		t.Fatalf("stopped load: %d records, %d transitions for %d episodes", exp.Records, len(exp.Transitions), len(exp.Episodes))
	}
	vs, err := VerifyInputs(ctx, newClient, cat, exp)
	if err != nil {
		t.Fatal(err)
	}
	acked := 0
	for _, v := range vs {
		acked += v.Expected
		if !v.OK() || v.Expected == 0 {
			t.Errorf("%+v: want every acknowledged record found once", v)
		}
	}
	if acked != exp.Records {
		t.Errorf("%d records acknowledged over the topics, %d produced", acked, exp.Records)
	}

	// One acknowledgement the log lacks, one record nobody was told of.
	obs := cat.Name(topics.Obs)
	exp.Acked[obs] = append(exp.Acked[obs], Landed{Partition: 0, Offset: 1 << 40})
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: cat.Name(topics.Actions), Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	vs, err = VerifyInputs(ctx, newClient, cat, exp)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Verdict{}
	for _, v := range vs {
		got[v.Name] = v
	}
	if v := got[topics.Obs]; v.Lost != 1 || v.Duplicated != 0 || v.OK() {
		t.Errorf("obs: %+v, want 1 lost", v)
	}
	if v := got[topics.Actions]; v.Lost != 0 || v.Duplicated != 1 || v.OK() {
		t.Errorf("actions: %+v, want 1 duplicated", v)
	}
	if v := got[topics.Rewards]; !v.OK() {
		t.Errorf("rewards: %+v, want ok", v)
	}
}
