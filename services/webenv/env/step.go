package env

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// StepString parses a BrowserGym action string and steps; a malformed string
// is reported in Info.Error and the episode goes on.
func (e *Env) StepString(ctx context.Context, s string) (*StepResult, error) {
	a, err := ParseAction(s)
	if err != nil {
		return e.rejected(ctx, s, err)
	}
	return e.Step(ctx, a)
}

// rejected answers an action that was not executed: the current page, no
// reward, the reason in Info.Error.
func (e *Env) rejected(ctx context.Context, action string, why error) (*StepResult, error) {
	if !e.active {
		return nil, errors.New("unable to step: no episode (call Reset first)")
	}
	c, cancel := e.bind(ctx)
	defer cancel()
	obs, st, err := e.observe(c, Settled{Stable: true})
	if err != nil {
		return nil, err
	}
	if !st.HasCore && e.lastScore != nil {
		st.Info = e.lastScore
	}
	r := &StepResult{Obs: obs, Done: e.done}
	r.Info = e.info(st)
	r.Info.Error, r.Info.Action = why.Error(), action
	return r, nil
}

// Step acts, waits for the page to settle and observes.
func (e *Env) Step(ctx context.Context, a Action) (*StepResult, error) {
	if !e.active {
		return nil, errors.New("unable to step: no episode (call Reset first)")
	}
	if e.done {
		return e.rejected(ctx, a.String(), errors.New("the episode is done: call Reset"))
	}
	c, cancel := e.bind(ctx)
	defer cancel()
	// The no-op click penalty needs the page's state before and after: the
	// click's aim and the observation read them in their own round trips.
	trackNoop := a.Type == Click && e.cfg.shaping.NoOpClick != 0
	var before *string
	if trackNoop {
		before = new(string)
	}
	t0 := time.Now()
	ac, acancel := context.WithTimeout(c, e.cfg.actionTimeout)
	actErr := e.act(ac, a, before)
	acancel()
	actTime := time.Since(t0)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("unable to step: %w", err)
	}
	netDelay, err := e.netWait(c)
	if err != nil {
		return nil, fmt.Errorf("unable to step: %w", err)
	}
	settled, err := e.cfg.settler.Settle(c, tabPage{e})
	if err != nil {
		return nil, fmt.Errorf("unable to settle after %s: %w", a, err)
	}
	obs, st, err := e.observe(c, settled)
	if err != nil {
		return nil, err
	}
	changed := true
	if trackNoop {
		changed = actErr == nil && *before != st.FP
	}
	if !st.HasCore && e.lastScore != nil {
		// Off the task's pages (an unknown page, an error page): the
		// episode's state did not change.
		st.Info = e.lastScore
	}
	info := e.info(st)
	info.Action, info.ActTime, info.NetDelay = a.String(), actTime, netDelay
	if actErr != nil {
		info.Error = actErr.Error()
	}
	groups := webenv.GroupsMet(info.Facts)
	prevPartial := e.lastPotential
	if e.lastScore != nil {
		prevPartial = e.lastScore.Partial
	} else {
		// A page that scores itself only at its end: progress is how far
		// its controls agree with the instruction; at the end it is 1 on
		// success, else 0 (info).
		info.Potential = true
		if !st.Done {
			info.Partial = instructionPotential(obs)
			e.lastPotential = info.Partial
		}
	}
	info.Shaping = e.cfg.shaping.Terms(webenv.StepFacts{
		PrevPartial: prevPartial, Partial: info.Partial,
		PrevGroups: e.lastGroups, Groups: groups,
		Click: a.Type == Click, Changed: changed,
		Repeated: a.String() == e.lastAction,
	})
	reward := info.Shaping.Total()
	if st.Done && info.Success {
		reward++
	}
	e.lastAction, e.lastGroups = a.String(), groups
	if st.Info != nil {
		e.lastScore = st.Info
	}
	e.done = st.Done
	return &StepResult{Obs: obs, Reward: reward, Done: st.Done, Info: info}, nil
}

// info builds the step info from the page status.
func (e *Env) info(st pageStatus) Info {
	info := Info{Raw: st.Raw, Decayed: st.Reward, Reason: st.Reason, Messages: append([]string(nil), e.messages...)}
	// Both page cores end a timed-out episode with this reason (MiniWoB's
	// core.js and ours, static/core.js).
	info.TimedOut = st.Done && st.Reason == "timed out"
	if s := st.Info; s != nil {
		info.Partial, info.Facts, info.Episode = s.Partial, s.Facts, s.Episode
		info.Success = st.Done && s.Success
	} else {
		info.Success = st.Done && st.Raw > 0
		if info.Success {
			info.Partial = 1
		}
	}
	return info
}

// RawStep is the floor of a step, for benchmarks: a click in the middle of
// the viewport and a screenshot, nothing else (no settling, no DOM read,
// no scoring).
func (e *Env) RawStep(ctx context.Context) error {
	c, cancel := e.bind(ctx)
	defer cancel()
	if err := e.click(c, float64(e.viewport.W)/2, float64(e.viewport.H)/2); err != nil {
		return fmt.Errorf("unable to click: %w", err)
	}
	_, err := e.screenshot(c)
	return err
}

// TruncationShaping is the reward to add when the caller ends an episode
// by its own step budget after this step: on a page whose Partial is a
// potential (Info.Potential), the Progress term takes the potential back,
// as the page's own end does, so that what shaping paid an episode that
// did not succeed sums to zero however it ended (else filling fields and
// never submitting would be the policy's best). 0 on rubric pages, whose
// partial credit is kept.
func TruncationShaping(s webenv.Shaping, info Info) float64 {
	if !info.Potential {
		return 0
	}
	return -s.Progress * info.Partial
}

// netWait makes the request WithRequestPerAction asks for on a MiniWoB++
// page and returns the delay the server drew for it.
func (e *Env) netWait(ctx context.Context) (time.Duration, error) {
	if !e.cfg.requestPerAction || !catalog.IsMiniWoB(e.task.Family) {
		return 0, nil
	}
	var ms float64
	if err := e.eval(ctx, `window.__wob.netWait()`, &ms); err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("unable to wait for the task server: %w", err)
		}
		// A navigation the action started aborts the page's request: the
		// wait ended, the step goes on.
		e.cfg.log.Debug("the request per action failed", "task", e.task.Family, "err", err)
		return 0, nil
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}
