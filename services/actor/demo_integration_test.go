package actor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/oracle"
)

// TestIntegrationMiniWoBDemonstrations runs demonstration tasks of
// MiniWoB++ pages through an actor on the real broker: each is played by its
// scripted solver one action at a time (solvers that read the page between
// steps: a hidden link's tab first, then the link; a form whose fields are
// found by the words beside them), every event of it says SOURCE_DEMO, the
// actions are the oracle's, and it is won. A task without a solver is
// aborted with that reason instead of played.
func TestIntegrationMiniWoBDemonstrations(t *testing.T) {
	srv, err := webenv.New(webenv.WithSuite(catalog.SuiteMiniWoB), webenv.WithMiniWoBDir(testenv.MiniWoBDir(t)), webenv.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	k := newKafkaEnv(t, srv.URL())
	solved := []string{"miniwob/click-tab-2", "miniwob/multi-layouts", "miniwob/click-collapsible-2", "miniwob/click-checkboxes"}
	// tic-tac-toe has no solver: against its random opponent no play
	// wins every game.
	const unsolved = "miniwob/tic-tac-toe"
	if _, ok := oracle.SolverFor(unsolved); ok {
		t.Fatalf("%s has a solver now: pick a task without one", unsolved)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := map[string]string{} // episode -> family
	for i, fam := range append(append([]string(nil), solved...), unsolved) {
		f, ok := catalog.LookupFamily(fam)
		if !ok {
			t.Fatalf("no family %s", fam)
		}
		want[k.produceDemo(t, ctx, i, fam, int64(10+i), eventspb.Tier(f.Tier), f.Tier.StepBudget())] = fam
	}
	a := k.startActor(t, WithExecutors(2), WithBrowsers(1), WithTaskGrace(3*time.Second), WithMaxSteps(10),
		WithFamilies("miniwob/click-test"), WithTaskGroup(k.catalog.Prefix+"actor-demo-test"))
	rctx, rcancel := context.WithCancel(context.Background())
	defer rcancel()
	ev := &events{}
	k.consume(t, rctx, ev)
	ended := func() map[string]*eventspb.Reward {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		out := map[string]*eventspb.Reward{}
		for _, r := range ev.rewards {
			if _, ok := want[r.GetEnvelope().GetEpisodeId()]; ok && r.GetDone() {
				out[r.GetEnvelope().GetEpisodeId()] = r
			}
		}
		return out
	}
	waitUntil(t, 3*time.Minute, "every demonstration to end", func() bool { return len(ended()) == len(want) })
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	rcancel()
	done := ended()
	ev.mu.Lock()
	defer ev.mu.Unlock()
	actions := map[string]int{}
	for _, x := range ev.actions {
		ep := x.GetEnvelope().GetEpisodeId()
		if _, ok := want[ep]; !ok {
			continue
		}
		actions[ep]++
		if x.GetEnvelope().GetSource() != eventspb.Source_SOURCE_DEMO || x.GetPolicyName() != DemoPolicyName {
			t.Errorf("%s (%s): action %s from %v by %q, want the oracle's demonstration", ep, want[ep], x.GetRaw(), x.GetEnvelope().GetSource(), x.GetPolicyName())
		}
	}
	for ep, fam := range want {
		r := done[ep]
		if r.GetEnvelope().GetSource() != eventspb.Source_SOURCE_DEMO {
			t.Errorf("%s (%s): its reward from %v", ep, fam, r.GetEnvelope().GetSource())
		}
		if fam == unsolved {
			if !r.GetAborted() || !strings.Contains(r.GetReason(), "no scripted solver") || actions[ep] != 0 {
				t.Errorf("%s (%s, no solver): %d actions, reward %v, want aborted for want of a solver", ep, fam, actions[ep], r)
			}
			continue
		}
		if r.GetAborted() || !r.GetSuccess() || actions[ep] < 2 {
			t.Errorf("%s (%s): %d actions, reward %v, want won", ep, fam, actions[ep], r)
		}
	}
}
