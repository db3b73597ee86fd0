package actor

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// scriptedPolicy is a Policy that is not a network: it clicks the
// observation's first element (a noop on a page without one) and records
// what each decision was given.
type scriptedPolicy struct {
	mu    sync.Mutex
	calls []string // "step:history length"
	swaps int
}

func (p *scriptedPolicy) Prepare(obs *eventspb.Observation) (Input, error) { return obs, nil }

func (p *scriptedPolicy) Decide(_ context.Context, in Input, q Query) (Decision, error) {
	obs, ok := in.(*eventspb.Observation)
	if !ok {
		return Decision{}, errForeignInput
	}
	p.mu.Lock()
	p.calls = append(p.calls, fmt.Sprintf("%d:%d", obs.GetEnvelope().GetStep(), len(q.History)))
	p.mu.Unlock()
	a := &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_NOOP, Raw: "noop()"}
	if els := obs.GetElements(); len(els) > 0 {
		a = &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: els[0].GetBid(), Raw: "click(" + strconv.Quote(els[0].GetBid()) + ")"}
	}
	return Decision{Action: a, Version: 7, BatchSize: 1}, nil
}

func (p *scriptedPolicy) Swap(context.Context, []byte, uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.swaps++
	return nil
}
func (p *scriptedPolicy) Version() uint64             { return 7 }
func (p *scriptedPolicy) Close(context.Context) error { return nil }

// TestIntegrationActorWithAnotherPolicy: a backend that is not the ONNX
// network drives real browser episodes through the Policy seam alone
// (WithPolicy): every decision sees the observation of its step and the
// episode's earlier actions, and the events carry its version.
func TestIntegrationActorWithAnotherPolicy(t *testing.T) {
	srv := startWebenv(t, "none")
	k := newKafkaEnv(t, srv.URL())
	p := &scriptedPolicy{}
	a := k.startActor(t, WithExecutors(1), WithBrowsers(1), WithMaxSteps(3), WithFamilies("type-text"),
		WithPolicy(func([]byte, uint64) (Policy, error) { return p, nil }))
	waitUntil(t, 3*time.Minute, "3 episodes", func() bool { return a.Stats().Episodes >= 3 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.calls) < 3 {
		t.Fatalf("%d decisions: %v", len(p.calls), p.calls)
	}
	later := 0
	for _, c := range p.calls {
		var step, hist int
		if _, err := fmt.Sscanf(c, "%d:%d", &step, &hist); err != nil || step != hist {
			t.Errorf("decision %s: the history does not hold the episode's earlier actions (step:history)", c)
		}
		if step > 0 {
			later++
		}
	}
	if later == 0 {
		t.Errorf("no decision after an episode's first step: %v", p.calls)
	}
	if v := a.PolicyVersion(); v != 7 {
		t.Errorf("actor reports policy version %d, want the backend's 7", v)
	}
	t.Logf("decisions (step:history): %v", p.calls)
}
