package loadtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"

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

	exp, tr, err := ExpectTraffic(ctx, newClient, cat, nil)
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

	exp, tr, err := ExpectTraffic(ctx, newClient, cat, nil)
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

// TestExpectTrafficKilledProducer is the verdict's accounting of what a
// producer killed with SIGKILL leaves: its in-flight tail, cut on some
// topics while another topic's batch was acknowledged, counted as cut and
// not lost; a record missing from the middle of acknowledged data (a hole
// in one topic's events of an episode), lost even for a killed producer;
// a tail missing from a producer that was not killed, lost; and a
// terminal transition of a cut episode, which fails the verdict.
func TestExpectTrafficKilledProducer(t *testing.T) {
	newClient, ctx, cat, cl := fakeTopics(t, "k.", 1)
	task := &eventspb.TaskRef{TaskId: "miniwob/click-test", Family: "miniwob/click-test"}
	var recs []*kgo.Record
	id := 0
	events := map[string]proto.Message{}
	add := func(topic, producer, ep string, step uint32, m eventspb.Event) string {
		id++
		e := eventspb.NewEnvelope(producer)
		e.EventId, e.EpisodeId, e.Step = fmt.Sprintf("%s-%d", ep, id), ep, step
		switch m := m.(type) {
		case *eventspb.Observation:
			m.Envelope = e
		case *eventspb.Action:
			m.Envelope = e
		case *eventspb.Reward:
			m.Envelope = e
		}
		b, err := marshalUnchecked(m)
		if err != nil {
			t.Fatal(err)
		}
		events[e.EventId] = m
		recs = append(recs, &kgo.Record{Topic: cat.Name(topic), Key: []byte(ep), Value: b})
		return e.EventId
	}
	// episode writes one episode of producer: obs, actions and rewards of
	// the steps listed for each (what reached the log), every step acted on
	// its own obs (or the step's, when the obs never landed).
	episode := func(producer, ep string, obs, acts, rews []uint32, doneAt int) {
		ids := map[uint32]string{}
		for _, s := range obs {
			ids[s] = add(topics.Obs, producer, ep, s, &eventspb.Observation{Task: task, Stable: true})
		}
		for _, s := range acts {
			ref := ids[s]
			if ref == "" {
				ref = fmt.Sprintf("%s-obs%d-never-landed", ep, s)
			}
			add(topics.Actions, producer, ep, s, &eventspb.Action{ObsEventId: ref, Type: eventspb.ActionType_ACTION_TYPE_NOOP})
		}
		for _, s := range rews {
			done := int(s) == doneAt
			add(topics.Rewards, producer, ep, s, &eventspb.Reward{Reward: 0.5, Done: done, Success: done})
		}
	}
	// The drill's case: the actions batch landed up to step 5, the obs
	// batch only to step 3 and the rewards batch to step 2.
	episode("actor-k/executor-0", "tail", []uint32{0, 1, 2, 3}, []uint32{0, 1, 2, 3, 4, 5}, []uint32{0, 1, 2}, -1)
	// The done reward landed, the last obs did not.
	episode("actor-k/executor-1", "donecut", []uint32{0}, []uint32{0, 1}, []uint32{0, 1}, 1)
	// The obs of step 1 is missing though the obs of step 2 is there.
	episode("actor-k/executor-0", "hole", []uint32{0, 2}, []uint32{0, 1, 2}, []uint32{0, 1, 2}, 2)
	// A producer that was not killed: its missing reward is lost.
	episode("actor-2/executor-0", "alive", []uint32{0, 1, 2}, []uint32{0, 1}, []uint32{0}, -1)
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	exp, tr, err := ExpectTraffic(ctx, newClient, cat, []string{"actor-k"})
	if err != nil {
		t.Fatal(err)
	}
	wantCut := []string{"obs donecut/1", "obs tail/4", "obs tail/5", "rewards tail/3", "rewards tail/4"}
	if !slices.Equal(tr.Cut, wantCut) || tr.CutEpisodes != 2 {
		t.Errorf("cut %v of %d episodes; want %v of 2", tr.Cut, tr.CutEpisodes, wantCut)
	}
	wantGaps := []string{"obs hole/1", "rewards alive/1"}
	if !slices.Equal(tr.Gaps, wantGaps) {
		t.Errorf("gaps %v; want %v", tr.Gaps, wantGaps)
	}
	if !exp.Cut["tail"] || !exp.Cut["donecut"] || exp.Cut["hole"] || exp.Cut["alive"] {
		t.Errorf("cut episodes %v; want tail and donecut", exp.Cut)
	}
	for k, w := range exp.Transitions {
		if exp.Cut[k.Episode] && w.Done {
			t.Errorf("a terminal transition of cut episode %s is expected", k.Episode)
		}
	}
	got := map[string]Verdict{}
	for _, v := range tr.Verdicts() {
		got[v.Name] = v
	}
	want := map[string]Verdict{
		topics.Obs:     {Name: topics.Obs, Expected: 10 + 1, Found: 10, Lost: 1, Cut: 3},
		topics.Actions: {Name: topics.Actions, Expected: 13, Found: 13},
		topics.Rewards: {Name: topics.Rewards, Expected: 9 + 1, Found: 9, Lost: 1, Cut: 2},
	}
	if !maps.Equal(got, want) {
		t.Errorf("verdicts %+v\nwant %+v", got, want)
	}
	if got[topics.Obs].OK() || got[topics.Rewards].OK() || !got[topics.Actions].OK() {
		t.Error("a verdict with a hole passes, or one without fails")
	}
	if !strings.Contains(tr.String(), "cut by the actor's kill: 5 events of 2 episodes") {
		t.Errorf("traffic %s: the cut tails are not counted apart", tr)
	}

	// Without the hole and the missing reward, the killed producer's tails
	// alone leave a passing input verdict.
	for name, v := range want {
		v.Expected, v.Lost = v.Found, 0
		if !v.OK() {
			t.Errorf("%s: a verdict with only cut tails fails: %+v", name, v)
		}
	}

	// The joiner's output: a terminal transition of a cut episode means the
	// learner trains on it, which fails the verdict.
	joinOffline(t, ctx, newClient, cat, 1)
	rep, err := Verify(ctx, newClient, cat, exp)
	if err != nil {
		t.Fatal(err)
	}
	if rep.CutTerminal != 0 {
		t.Fatalf("a perfect join has %d terminal transitions of cut episodes: %s", rep.CutTerminal, rep)
	}
	var obs1, act1 string
	for id, m := range events {
		if o, ok := m.(*eventspb.Observation); ok && o.GetEnvelope().GetEpisodeId() == "tail" && o.GetEnvelope().GetStep() == 3 {
			obs1 = id
		}
		if a, ok := m.(*eventspb.Action); ok && a.GetEnvelope().GetEpisodeId() == "tail" && a.GetEnvelope().GetStep() == 3 {
			act1 = id
		}
	}
	terminal := &eventspb.Transition{Envelope: eventspb.NewEnvelope("joiner"), EpisodeId: "tail", Step: 3, Done: true,
		Obs: events[obs1].(*eventspb.Observation), Action: events[act1].(*eventspb.Action), Reward: 1}
	b, err := marshalUnchecked(terminal)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: cat.Name(topics.Transitions), Key: []byte("tail"), Value: b}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	rep, err = Verify(ctx, newClient, cat, exp)
	if err != nil {
		t.Fatal(err)
	}
	if rep.CutTerminal != 1 || rep.OK() {
		t.Errorf("a terminal transition of a cut episode: %d counted, report ok %v: %s", rep.CutTerminal, rep.OK(), rep)
	}
}
