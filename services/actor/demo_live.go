package actor

import (
	"context"
	"errors"

	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/oracle"
)

// liveDemo is a MiniWoB++ task's scripted solver (oracle.SolverFor) run as
// a demonstration. A solver reads the page as it goes (what a step
// revealed decides the next), so it is not a plan made up front: it runs
// in a goroutine of its own and hands the executor one action at a time,
// and the executor hands back what stepping it gave. The two never use the
// env at once: the solver runs only between receiving a result and
// handing over its next action, while the executor waits for that action.
type liveDemo struct {
	acts    chan env.Action
	results chan *env.StepResult
	done    chan error
	cancel  context.CancelFunc
}

// startLiveDemo starts the solver of task on the episode whose first
// observation is obs.
func startLiveDemo(ctx context.Context, e *env.Env, task env.TaskRef, obs *env.Observation) *liveDemo {
	ctx, cancel := context.WithCancel(ctx)
	l := &liveDemo{acts: make(chan env.Action), results: make(chan *env.StepResult), done: make(chan error, 1), cancel: cancel}
	step := func(ctx context.Context, a env.Action) (*env.StepResult, error) {
		select {
		case l.acts <- a:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case r := <-l.results:
			return r, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	go func() { l.done <- oracle.NewPlay(e, obs, step).Solve(ctx, task) }()
	return l
}

// next is the solver's next action; an error when it ended (or failed)
// before handing one over.
func (l *liveDemo) next(ctx context.Context) (env.Action, error) {
	select {
	case a := <-l.acts:
		return a, nil
	case err := <-l.done:
		if err == nil {
			err = errors.New("the scripted solution ended before the task did")
		}
		return env.Action{}, err
	case <-ctx.Done():
		return env.Action{}, ctx.Err()
	}
}

// result hands the solver what its last action gave. A solver that ended
// takes none.
func (l *liveDemo) result(ctx context.Context, r *env.StepResult) {
	select {
	case l.results <- r:
	case <-l.done:
	case <-ctx.Done():
	}
}

// stop ends the solver (the episode ended, whatever the solver was doing).
func (l *liveDemo) stop() { l.cancel() }
