package oracle

import (
	"context"
	"fmt"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// DemoStep is one step of a demonstration: what the agent saw and what it did.
type DemoStep struct {
	Obs    *env.Observation
	Action env.Action
}

// Demo is one episode: the steps and the outcome.
type Demo struct {
	Task    env.TaskRef
	Steps   []DemoStep
	Return  float64
	Success bool
	Partial float64
	Reason  string
	Facts   []webenv.FactResult
}

// findWait bounds the wait for a plan step's element (lazy content).
const findWait = 10 * time.Second

// Solve runs the scripted solution of a webenv task through e and returns the
// demonstration. An error means the oracle could not act (an element of the
// plan never appeared, an action failed): a bug of the family or the env.
func Solve(ctx context.Context, e *env.Env, task env.TaskRef) (*Demo, error) {
	p, err := webenv.Generate(task.Family, task.Site, task.Seed)
	if err != nil {
		return nil, fmt.Errorf("unable to generate %v: %w", task, err)
	}
	obs, err := e.Reset(ctx, task)
	if err != nil {
		return nil, err
	}
	d := &Demo{Task: task}
	for i, st := range p.Plan {
		actions, err := Actions(ctx, e, st)
		if err != nil {
			return d, fmt.Errorf("plan step %d (%s %s): %w", i, st.Op, st.Sel, err)
		}
		for _, a := range actions {
			d.Steps = append(d.Steps, DemoStep{Obs: obs, Action: a})
			r, err := e.Step(ctx, a)
			if err != nil {
				return d, fmt.Errorf("plan step %d (%s): %w", i, a, err)
			}
			if r.Info.Error != "" {
				return d, fmt.Errorf("plan step %d (%s): %s", i, a, r.Info.Error)
			}
			d.Return += r.Reward
			d.Success, d.Partial, d.Reason, d.Facts = r.Info.Success, r.Info.Partial, r.Info.Reason, r.Info.Facts
			obs = r.Obs
			if r.Done {
				return d, nil
			}
		}
	}
	return d, nil
}

// Actions turns a plan step into env actions on the bid its selector finds
// now (the actor's demonstration episodes use it step by step).
func Actions(ctx context.Context, e *env.Env, st webenv.OracleStep) ([]env.Action, error) {
	var bid string
	if st.Sel != "" && st.Op != "type" {
		var err error
		if bid, err = e.QueryBID(ctx, st.Sel, findWait); err != nil {
			return nil, err
		}
	}
	switch st.Op {
	case "click":
		return []env.Action{{Type: env.Click, BID: bid}}, nil
	case "fill":
		return []env.Action{{Type: env.Fill, BID: bid, Text: st.Text}}, nil
	case "select":
		return []env.Action{{Type: env.SelectOption, BID: bid, Options: []string{st.Text}}}, nil
	case "press":
		return []env.Action{{Type: env.Press, BID: bid, Key: st.Text}}, nil
	case "type":
		// Real key events, one per character, into the focused field.
		var out []env.Action
		for _, r := range st.Text {
			out = append(out, env.Action{Type: env.Press, Key: string(r)})
		}
		return out, nil
	case "msg":
		return []env.Action{{Type: env.SendMsg, Text: st.Text}}, nil
	case "scroll":
		return []env.Action{{Type: env.Scroll, DY: 120}}, nil
	}
	return nil, fmt.Errorf("unknown plan op %q", st.Op)
}

// Settler is the settler the oracle should run with: the DOM-quiet settler
// plus the page core's own hints (its pending loads, reports, spinners, lazy
// content and layout shifts), so that a demonstration never acts on a frame
// that is about to change, even under the "web" latency profile.
func Settler() env.DOMQuiet {
	return env.DOMQuiet{Quiet: 5 * time.Millisecond, Poll: 5 * time.Millisecond, Timeout: 20 * time.Second, PageHints: true}
}
