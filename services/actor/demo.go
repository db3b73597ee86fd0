package actor

import (
	"context"
	"fmt"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/oracle"
)

// DemoPolicyName stamps the actions of demonstration episodes: webenv's
// scripted solution, not a trained policy.
const DemoPolicyName = "oracle"

// demoPlan is the scripted solution of a demonstration episode (a task with
// demo set), handed out one env action at a time: it goes through the same
// observe, publish and act code as a policy episode, so behaviour cloning
// trains on exactly what the policy will see.
type demoPlan struct {
	steps []webenv.OracleStep
	next  int
	queue []env.Action
	// live, for a MiniWoB++ task, is its solver run as it goes (the steps
	// are then unused).
	live *liveDemo
}

func newDemoPlan(task *eventspb.Task) (*demoPlan, error) {
	p, err := webenv.Generate(task.GetFamily(), task.GetSite(), task.GetSeed())
	if err != nil {
		return nil, fmt.Errorf("unable to plan the demonstration of %s: %w", task.GetTaskId(), err)
	}
	return &demoPlan{steps: p.Plan}, nil
}

// demoFindWait bounds the wait for a plan step's element; the page is
// already stable when the executor decides, so it is short.
const demoFindWait = 5 * time.Second

// demoDecide is decide for a demonstration: the plan's next action, published
// with source SOURCE_DEMO and a log-prob of 0 (the demonstrator is
// deterministic).
func (x *executor) demoDecide(ctx context.Context) (*decision, error) {
	ep := x.ep
	t0 := time.Now()
	plan := ep.demo
	for plan.live == nil && len(plan.queue) == 0 {
		if plan.next >= len(plan.steps) {
			return nil, x.abort(ep.step, "demo", "the scripted solution ended before the task did")
		}
		st := plan.steps[plan.next]
		plan.next++
		qctx, cancel := context.WithTimeout(ctx, demoFindWait+time.Second)
		acts, err := DemoActions(qctx, x.e, st)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, x.abort(ep.step, "demo", "the scripted solution could not act: "+err.Error())
		}
		plan.queue = acts
	}
	var act env.Action
	if plan.live != nil {
		var err error
		if act, err = plan.live.next(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, x.abort(ep.step, "demo", "the scripted solver: "+err.Error())
		}
	} else {
		act = plan.queue[0]
		plan.queue = plan.queue[1:]
	}
	a, err := DemoEvent(act, ep.scaleY)
	if err != nil {
		return nil, x.abort(ep.step, "demo", err.Error())
	}
	a.Envelope = eventspb.NewEnvelope(x.name)
	a.Envelope.EpisodeId, a.Envelope.Step, a.Envelope.Source = ep.id, ep.step, eventspb.Source_SOURCE_DEMO
	a.ObsEventId = ep.obs.GetEnvelope().GetEventId()
	a.PolicyName = DemoPolicyName
	if err := x.s.pub.send(x.s.pub.actions, ep.id, a); err != nil {
		return nil, x.fail(ctx, ep.step, err, "publish")
	}
	x.ts.since(phThink, t0)
	return &decision{ev: a, act: act}, nil
}

// DemoEvent is the action event of a scripted env action (the action
// table's ToProto), with its points and scroll amounts in wire-frame pixels
// as a policy's are: scaleY is wire-frame pixels per CSS pixel (envAction is
// the inverse).
func DemoEvent(a env.Action, scaleY float64) (*eventspb.Action, error) {
	if scaleY <= 0 {
		scaleY = 1
	}
	switch r, _ := action.ByName(a.Type); {
	case a.Type == env.Scroll:
		a.DX, a.DY, a.X, a.Y = a.DX*scaleY, a.DY*scaleY, a.X*scaleY, a.Y*scaleY
	case r.Target == action.TargetPoint:
		a.X, a.Y, a.ToX, a.ToY = a.X*scaleY, a.Y*scaleY, a.ToX*scaleY, a.ToY*scaleY
	}
	ev, err := action.ToProto(a)
	if err != nil {
		return nil, fmt.Errorf("the scripted solution used an action the events cannot carry: %w", err)
	}
	return ev, nil
}

// DemoActions are the env actions a demonstration takes for a plan step,
// in the policy's action space: the scripted solution types text key by
// key, which the policy's heads cannot express (its press is Enter on an
// element), so typing into a field is demonstrated as filling it, which
// leaves the same value. The expressiveness audit replays plans through it.
func DemoActions(ctx context.Context, e *env.Env, st webenv.OracleStep) ([]env.Action, error) {
	if st.Op == "type" && st.Sel != "" {
		bid, err := e.QueryBID(ctx, st.Sel, demoFindWait)
		if err != nil {
			return nil, err
		}
		return []env.Action{{Type: env.Fill, BID: bid, Text: st.Text}}, nil
	}
	return oracle.Actions(ctx, e, st)
}
