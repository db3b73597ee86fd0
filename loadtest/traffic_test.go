package loadtest

import (
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestExpectTrafficMatchesTheGenerator derives the expectation from the
// topics alone, as the drill does for real actors, and checks it against
// what the generator recorded as it sent (the same transitions, episodes
// and dead letters), and that a perfect join verifies against it.
func TestExpectTrafficMatchesTheGenerator(t *testing.T) {
	newClient, ctx, cat, cl := fakeTopics(t, "x.", 3)
	load := DefaultConfig(3000)
	load.Steps = 3
	gen, err := Generate(ctx, cl, cat, load)
	if err != nil {
		t.Fatal(err)
	}
	joinOffline(t, ctx, newClient, cat, 3)

	exp, tr, err := ExpectTraffic(ctx, newClient, cat)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(exp.Transitions, gen.Transitions) {
		t.Errorf("derived %d transitions, the generator expects %d", len(exp.Transitions), len(gen.Transitions))
		n := 0
		for k, v := range gen.Transitions {
			if got, ok := exp.Transitions[k]; (!ok || got != v) && n < 5 {
				n++
				t.Errorf("  %v: derived %+v (present %v), want %+v", k, got, ok, v)
			}
		}
	}
	if !maps.Equal(exp.Episodes, gen.Episodes) {
		t.Errorf("derived %d episodes, the generator expects %d", len(exp.Episodes), len(gen.Episodes))
	}
	if len(exp.Malformed) != len(gen.Malformed) || tr.DeadLettered != 0 {
		t.Errorf("derived %d expected dead letters (%d steps), the generator sent %d malformed records", len(exp.Malformed), tr.DeadLettered, len(gen.Malformed))
	}
	if tr.Finished != len(gen.Episodes) || tr.Aborted != 0 || tr.Unfinished != 0 || len(tr.Gaps) != 0 {
		t.Errorf("traffic %s, gaps %v; want %d finished episodes", tr, tr.Gaps, len(gen.Episodes))
	}
	dups := 0
	for _, v := range tr.Verdicts() {
		dups += v.Duplicated
		if v.Lost != 0 {
			t.Errorf("input verdict %+v", v)
		}
	}
	if dups != gen.Duplicates {
		t.Errorf("%d repeated events in the inputs, the generator sent %d duplicates", dups, gen.Duplicates)
	}
	rep, err := Verify(ctx, newClient, cat, exp)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("a perfect join does not verify against the derived expectation: %s", rep)
	}
}

// TestExpectTrafficEndings covers what real actors leave that the generator
// never does: an episode aborted at step 1 (a dead browser), one whose
// actor died after step 0 (no done reward, an action without its reward),
// and a step lost inside a finished episode.
func TestExpectTrafficEndings(t *testing.T) {
	newClient, ctx, cat, cl := fakeTopics(t, "e.", 1)
	task := &eventspb.TaskRef{TaskId: "miniwob/click-test", Family: "miniwob/click-test"}
	var recs []*kgo.Record
	id := 0
	env := func(ep string, step uint32) *eventspb.Envelope {
		id++
		e := eventspb.NewEnvelope("test")
		e.EventId, e.EpisodeId, e.Step = ep+"-"+string(rune('a'+id)), ep, step
		return e
	}
	add := func(topic string, m eventspb.Event) {
		b, err := marshalUnchecked(m)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: cat.Name(topic), Key: []byte(m.GetEnvelope().GetEpisodeId()), Value: b})
	}
	obs := func(ep string, s uint32) string {
		o := &eventspb.Observation{Envelope: env(ep, s), Task: task, Stable: true}
		add(topics.Obs, o)
		return o.Envelope.EventId
	}
	act := func(ep string, s uint32, ref string) {
		add(topics.Actions, &eventspb.Action{Envelope: env(ep, s), ObsEventId: ref, Type: eventspb.ActionType_ACTION_TYPE_NOOP})
	}
	rew := func(ep string, s uint32, r float64, done, aborted bool) {
		add(topics.Rewards, &eventspb.Reward{Envelope: env(ep, s), Reward: r, Done: done, Success: done && !aborted && r > 0, Aborted: aborted})
	}
	// aborted: step 0 whole, step 1's reward aborted (no action).
	o0 := obs("ab", 0)
	act("ab", 0, o0)
	rew("ab", 0, 0.1, false, false)
	obs("ab", 1)
	rew("ab", 1, 0, true, true)
	// unfinished: step 0 whole, step 1 acted, no reward.
	u0 := obs("un", 0)
	act("un", 0, u0)
	rew("un", 0, 0, false, false)
	u1 := obs("un", 1)
	act("un", 1, u1)
	// gap: step 0's reward lost, step 1 ends it.
	g0 := obs("gap", 0)
	act("gap", 0, g0)
	g1 := obs("gap", 1)
	act("gap", 1, g1)
	rew("gap", 1, 1, true, false)
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	exp, tr, err := ExpectTraffic(ctx, newClient, cat)
	if err != nil {
		t.Fatal(err)
	}
	want := map[StepKey]bool{{"ab", 0}: true, {"un", 0}: true, {"gap", 1}: true}
	for k := range exp.Transitions {
		if !want[k] {
			t.Errorf("transition %v expected", k)
		}
	}
	for k := range want {
		if _, ok := exp.Transitions[k]; !ok {
			t.Errorf("transition %v not expected", k)
		}
	}
	if w := exp.Transitions[StepKey{"ab", 0}]; w.Next == "" || w.Done {
		t.Errorf("the step before the abort: %+v, want its next state and not done", w)
	}
	if w := exp.Transitions[StepKey{"gap", 1}]; w.Next != "" || !w.Done || w.Reward != 1 {
		t.Errorf("the last step: %+v, want done, reward 1, no next state", w)
	}
	if e, ok := exp.Episodes["ab"]; !ok || !e.Aborted || e.Length != 2 || e.Return != 0.1 {
		t.Errorf("aborted episode: %+v (present %v)", e, ok)
	}
	if _, ok := exp.Episodes["un"]; ok {
		t.Error("an unfinished episode has a summary expected")
	}
	if tr.Episodes != 3 || tr.Finished != 1 || tr.Aborted != 1 || tr.Unfinished != 1 {
		t.Errorf("traffic %s", tr)
	}
	if len(tr.Gaps) != 1 || tr.Gaps[0] != "rewards gap/0" {
		t.Errorf("gaps %v, want the reward of gap/0", tr.Gaps)
	}
}
