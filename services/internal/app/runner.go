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
// already started are stopped in reverse order and the start error is
// returned.
func (r *Runner) Start(ctx context.Context, services []Service, stopTimeout time.Duration) error {
	for _, s := range services {
		t0 := time.Now()
		if err := s.Start(ctx); err != nil {
			stopCtx, cancel := context.WithTimeout(context.Background(), stopTimeout)
			defer cancel()
			if serr := r.Stop(stopCtx); serr != nil {
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

// Stop stops the started services in reverse start order. Every service is
// asked to stop even when an earlier one failed; the errors are joined.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	started := r.started
	r.started = nil
	r.ready = false
	r.mu.Unlock()
	var errs []error
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

// Healthy reports the first unhealthy running service. While services are
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
	for _, s := range started {
		if h, ok := s.(HealthChecker); ok {
			if err := h.Healthy(ctx); err != nil {
				return fmt.Errorf("%s: %w", s.Name(), err)
			}
		}
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
