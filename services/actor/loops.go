package actor

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
)

// runAsync is one executor on its own: it starts an episode, thinks and
// acts, and while it waits for its page the others think and act; their
// inference requests meet in the batching server.
func (s *Service) runAsync(ctx context.Context, x *executor) {
	for ctx.Err() == nil {
		var err error
		if x.ep == nil {
			err = x.begin(ctx)
		} else {
			var d *decision
			if d, err = x.think(ctx); err == nil {
				err = x.act(ctx, d)
			}
		}
		if !s.carryOn(ctx, x, err) {
			break
		}
	}
	s.stopped(x)
}

// carryOn decides after an executor's step: an aborted episode was already
// recorded, so the executor goes on; anything else but a shutdown is
// logged, and the executor goes on after a pause (it recovers its tab on
// the next failure).
func (s *Service) carryOn(ctx context.Context, x *executor, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, errAborted) && ctx.Err() == nil:
		if x.aborts < 2 {
			return true
		}
		// Aborted again and again: wait before the next task (idle).
		t0 := time.Now()
		d := min(50*time.Millisecond<<min(x.aborts, 8), 10*time.Second)
		err := backoff.Sleep(ctx, d)
		x.ts.since(phIdle, t0)
		return err == nil
	case ctx.Err() != nil:
		return false
	}
	s.log.Error("executor step failed", "executor", x.idx, "err", err)
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Second):
		return true
	}
}

// stopped records the episode the executor was in when the actor stopped.
func (s *Service) stopped(x *executor) {
	if x.ep != nil {
		_ = x.abort(x.ep.step, "stopped", "actor stopped")
	}
}

// runRaw is ModeRaw's executor: its first task once, then clicks and
// screenshots only, each counted as a step. Failures end the loop (a
// benchmark's floor is not worth recovering for).
func (s *Service) runRaw(ctx context.Context, x *executor) {
	if err := x.begin(ctx); err != nil {
		s.log.Warn("raw loop: unable to open the first task", "executor", x.name, "err", err)
		return
	}
	for ctx.Err() == nil {
		t0 := time.Now()
		if err := x.e.RawStep(ctx); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("raw loop: step failed", "executor", x.name, "err", err)
			}
			return
		}
		x.ts.since(phAct, t0)
		s.c.steps.Add(1)
	}
}

// runSync is the lock-step baseline over the same executors and code: in
// each round every executor acts (or starts an episode) and waits for its
// page, a barrier waits for the slowest, every executor featurizes its
// state, and one batched inference decides for all. Time an executor
// spends at a barrier is idle. With episodeBatches (ModeSync) episodes
// start only together, when every executor's episode of the batch has
// ended, as in a synchronous RL rollout that collects one batch of
// trajectories per policy; without (ModeSyncStep) an executor starts its
// next episode in the round after its last one ended.
func (s *Service) runSync(ctx context.Context, episodeBatches bool) {
	xs := s.execs
	decisions := make([]*decision, len(xs))
	feats := make([]Input, len(xs))
	// A batch is one policy (or held-out) episode per executor: the
	// learner counts those into its on-policy batch (learner.syncBatch),
	// never demonstrations, so an executor that draws a demonstration plays
	// it and draws again until it has its policy episode (owed). A batch of
	// only demonstrations (the tasks came to an end, or ctx did) waits for
	// no version: none would come (12-06: a sync run stopped for good after
	// its 48th demonstration, the learner done with its cloning updates).
	// Before, a batch mixing both waited the learner's syncGrace (20 s)
	// for the episodes it never counts.
	//
	// acted is the version the batch's last policy episode began with
	// (versions only grow): the next batch waits for one newer than it.
	owed := make([]bool, len(xs))
	var acted uint64
	policyActed := false
	for ctx.Err() == nil {
		newBatch := !episodeBatches || !slices.ContainsFunc(xs, func(x *executor) bool { return x.ep != nil }) && !slices.Contains(owed, true)
		if newBatch && episodeBatches && s.opts.onPolicy {
			if policyActed && !s.awaitVersion(ctx, xs, acted) {
				break
			}
			policyActed = false
		}
		if newBatch {
			for i := range owed {
				owed[i] = true
			}
		}
		s.barrier(xs, func(i int, x *executor) {
			var err error
			if x.ep == nil {
				if !owed[i] {
					return // done with this batch: waits for its longest episode
				}
				err = x.begin(ctx)
			} else if d := decisions[i]; d != nil {
				err = x.act(ctx, d)
			}
			decisions[i] = nil
			if !s.carryOn(ctx, x, err) {
				return
			}
		})
		for i, x := range xs {
			if owed[i] && x.ep != nil && x.ep.demo == nil && x.ep.step == 0 {
				owed[i], policyActed, acted = false, true, s.policy.Version()
			}
		}
		s.barrier(xs, func(i int, x *executor) {
			feats[i] = nil
			if x.ep == nil || ctx.Err() != nil {
				return
			}
			t0 := time.Now()
			f, err := x.featurize(ctx)
			x.ts.since(phThink, t0)
			if err == nil {
				feats[i] = f
			}
		})
		// All requests reach the batching server together: one batch
		// (up to its max batch size).
		s.barrier(xs, func(i int, x *executor) {
			if feats[i] == nil || x.ep == nil || ctx.Err() != nil {
				return
			}
			d, err := x.decide(ctx, feats[i])
			if err == nil {
				decisions[i] = d
			}
		})
	}
	for _, x := range xs {
		s.stopped(x)
	}
}

// awaitVersion waits, counting the time as every executor's idle time, until
// the policy server holds a version newer than v (WithOnPolicy); false when
// ctx ended first.
func (s *Service) awaitVersion(ctx context.Context, xs []*executor, v uint64) bool {
	t0 := time.Now()
	defer func() {
		for _, x := range xs {
			x.ts.since(phIdle, t0)
		}
	}()
	for s.policy.Version() <= v {
		if err := backoff.Sleep(ctx, 10*time.Millisecond); err != nil {
			return false
		}
	}
	return true
}

// barrier runs fn for every executor at once and returns when all are
// done; each executor's wait for the others is counted as idle.
func (s *Service) barrier(xs []*executor, fn func(i int, x *executor)) {
	var wg sync.WaitGroup
	finished := make([]time.Time, len(xs))
	for i, x := range xs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i, x)
			finished[i] = time.Now()
		}()
	}
	wg.Wait()
	end := time.Now()
	for i, x := range xs {
		x.ts.add(phIdle, end.Sub(finished[i]))
	}
}

// publishTelemetry sends every executor's window each period until ctx
// ends, then a last one.
func (s *Service) publishTelemetry(ctx context.Context) {
	app.Every(ctx, s.opts.telemetryEvery, func(context.Context) { s.sendTelemetry() })
}

func (s *Service) sendTelemetry() {
	for _, x := range s.execs {
		ev := x.ts.window(s.opts.instance, s.opts.instance, x.name, s.opts.mode)
		if err := s.pub.send(s.pub.tel, s.opts.instance, ev); err != nil {
			s.log.Error("unable to publish telemetry", "err", err)
		}
	}
}
