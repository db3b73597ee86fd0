package prom

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes every metric of the project.
const Namespace = "asyncwebrl"

// Set declares the metrics of one subsystem on a registerer. A metric
// already registered under its name (a second joiner or actor in one
// process, as the benches and tests run them) is reused, so instances
// share it; any other registration error is kept for Err. A nil registerer
// keeps the metrics private (nobody scrapes them).
type Set struct {
	reg prometheus.Registerer
	sub string
	err error
}

// New starts the set of subsystem's metrics on reg.
func New(reg prometheus.Registerer, subsystem string) *Set {
	return &Set{reg: reg, sub: subsystem}
}

// Err is the first registration error, if any.
func (s *Set) Err() error {
	if s.err != nil {
		return fmt.Errorf("unable to register %s metrics: %w", s.sub, s.err)
	}
	return nil
}

// Counter declares a counter.
func (s *Set) Counter(name, help string) prometheus.Counter {
	return register(s, prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Subsystem: s.sub, Name: name, Help: help}))
}

// CounterVec declares a counter with labels.
func (s *Set) CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return register(s, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: s.sub, Name: name, Help: help}, labels))
}

// Gauge declares a gauge.
func (s *Set) Gauge(name, help string) prometheus.Gauge {
	return register(s, prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Subsystem: s.sub, Name: name, Help: help}))
}

// Histogram declares a histogram with the given buckets.
func (s *Set) Histogram(name, help string, buckets []float64) prometheus.Histogram {
	return register(s, prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: s.sub, Name: name, Help: help, Buckets: buckets}))
}

func register[C prometheus.Collector](s *Set, c C) C {
	if s.reg == nil {
		return c
	}
	if err := s.reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		if s.err == nil {
			s.err = err
		}
	}
	return c
}
