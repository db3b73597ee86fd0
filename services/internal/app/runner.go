package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"
)

// Runner starts services in order and stops them in reverse.
type Runner struct {
	log     *slog.Logger
	mu      sync.Mutex
	started []Service
	ready   bool // every service of the last Start is up
}

// NewRunner returns a runner that logs to log.
func NewRunner(log *slog.Logger) *Runner {
	return &Runner{log: log}
}

// Start starts each service in order. When one fails to start, the services
// already started are stopped in reverse order (without ending producers or
// draining first: a stack that never came up has no run to complete) and the
// start error is returned.
func (r *Runner) Start(ctx context.Context, services []Service, stopTimeout time.Duration) error {
	for _, s := range services {
		t0 := time.Now()
		if err := s.Start(ctx); err != nil {
			stopCtx, cancel := context.WithTimeout(context.Background(), stopTimeout)
			defer cancel()
			if serr := r.stop(stopCtx, false); serr != nil {
				r.log.Warn("stop after failed start", "err", serr)
			}
			return fmt.Errorf("unable to start %s: %w", s.Name(), err)
		}
		r.mu.Lock()
		r.started = append(r.started, s)
		r.mu.Unlock()
		r.log.Info("started", "service", s.Name(), "took", time.Since(t0).Round(time.Millisecond))
	}
	r.mu.Lock()
	r.ready = true
	r.mu.Unlock()
	return nil
}

// Stop stops the started services in three phases:
//
//  1. StopProducing on every Producer, in reverse start order (the source of
//     tasks before the actors that take them), so the topics stop growing;
//  2. Drain on every Drainer, in start order (the joiner before the
//     recorder that reads its output), so every event produced is consumed
//     and committed downstream;
//  3. Stop on every service in reverse start order.
//
// Every service is asked to stop even when an earlier one failed; the errors
// of phases 1 and 3 are joined. A drain that does not finish is logged with
// how far behind it was left, and is not an error: the stop itself
// succeeded, and the next run consumes the rest.
//
// Phases 1 and 2 end a third of ctx's remaining time before its deadline, so
// the Stops always have time to commit and close: a drain that took the
// whole deadline would turn a slow drain into a stop that misses it.
func (r *Runner) Stop(ctx context.Context) error {
	return r.stop(ctx, true)
}

func (r *Runner) stop(ctx context.Context, quiesce bool) error {
	r.mu.Lock()
	started := r.started
	r.started = nil
	r.ready = false
	r.mu.Unlock()
	var errs []error
	if quiesce {
		errs = r.quiesce(ctx, started)
	}
	for i := len(started) - 1; i >= 0; i-- {
		s := started[i]
		t0 := time.Now()
		if err := s.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("unable to stop %s: %w", s.Name(), err))
			r.log.Error("stop failed", "service", s.Name(), "err", err)
			continue
		}
		r.log.Info("stopped", "service", s.Name(), "took", time.Since(t0).Round(time.Millisecond))
	}
	return errors.Join(errs...)
}

// quiesce runs the first two phases of Stop: producers end, drainers
// catch up. It returns the producers' errors.
func (r *Runner) quiesce(ctx context.Context, started []Service) []error {
	qctx, cancel := quiesceContext(ctx)
	defer cancel()
	var errs []error
	for i := len(started) - 1; i >= 0; i-- {
		p, ok := started[i].(Producer)
		if !ok {
			continue
		}
		name, t0 := started[i].Name(), time.Now()
		if err := p.StopProducing(qctx); err != nil {
			errs = append(errs, fmt.Errorf("unable to stop %s producing: %w", name, err))
			r.log.Error("stop producing failed", "service", name, "err", err)
			continue
		}
		r.log.Info("producing ended", "service", name, "took", time.Since(t0).Round(time.Millisecond))
	}
	for _, s := range started {
		d, ok := s.(Drainer)
		if !ok {
			continue
		}
		t0 := time.Now()
		if err := d.Drain(qctx); err != nil {
			r.log.Warn("drain incomplete; stopping anyway, the rest is consumed by the next run",
				"service", s.Name(), "took", time.Since(t0).Round(time.Millisecond), "err", err)
			continue
		}
		r.log.Info("drained", "service", s.Name(), "took", time.Since(t0).Round(time.Millisecond))
	}
	return errs
}

// quiesceContext is ctx ending a third of its remaining time early (ctx
// itself when it has no deadline).
func quiesceContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline.Add(-time.Until(deadline)/3))
}

// Healthy reports the first unhealthy running service, or else every
// degraded one (see Degraded). While services are
// still starting the process is not healthy yet: a load balancer or a test
// must not route to (or stop) a half-started stack.
func (r *Runner) Healthy(ctx context.Context) error {
	r.mu.Lock()
	started := append([]Service(nil), r.started...)
	ready := r.ready
	r.mu.Unlock()
	if !ready {
		return errors.New("starting")
	}
	// The first failure wins over any degradation: a degraded service
	// must not hide one that needs a restart.
	var degraded []error
	for _, s := range started {
		if h, ok := s.(HealthChecker); ok {
			if err := h.Healthy(ctx); err != nil {
				err = fmt.Errorf("%s: %w", s.Name(), err)
				if !IsDegraded(err) {
					return err
				}
				degraded = append(degraded, err)
			}
		}
	}
	if len(degraded) > 0 {
		return Degraded(errors.Join(degraded...))
	}
	return nil
}

// Failed yields the first error of any started service that implements
// Failer. The channel never yields when none fails.
func (r *Runner) Failed() <-chan error {
	r.mu.Lock()
	started := append([]Service(nil), r.started...)
	r.mu.Unlock()
	out := make(chan error, 1)
	var cases []reflect.SelectCase
	var names []string
	for _, s := range started {
		if f, ok := s.(Failer); ok {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(f.Failed())})
			names = append(names, s.Name())
		}
	}
	if len(cases) == 0 {
		return out
	}
	go func() {
		i, v, ok := reflect.Select(cases)
		err := fmt.Errorf("%s failed", names[i])
		if ok && !v.IsNil() {
			err = fmt.Errorf("%s failed: %w", names[i], v.Interface().(error))
		}
		out <- err
	}()
	return out
}
