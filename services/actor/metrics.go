package actor

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the actor's Prometheus series. Labels are limited to topic,
// mode and fixed reasons; per-step data goes to the telemetry topic.
type metrics struct {
	steps         *prometheus.CounterVec
	episodes      *prometheus.CounterVec
	aborted       *prometheus.CounterVec
	blocked       prometheus.Counter
	restarts      prometheus.Counter
	swaps         prometheus.Counter
	badInputs     *prometheus.CounterVec
	produced      *prometheus.CounterVec
	produceErrors *prometheus.CounterVec
	unstable      prometheus.Counter
	version       prometheus.Gauge
	inference     prometheus.Histogram
	batchSize     prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	var err error
	ns, sub := "asyncwebrl", "actor"
	cv := func(name, help string, labels ...string) *prometheus.CounterVec {
		return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help}, labels), &err)
	}
	c := func(name, help string) prometheus.Counter {
		return register(reg, prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help}), &err)
	}
	m := &metrics{
		steps:         cv("steps_total", "Actions executed, by mode.", "mode"),
		episodes:      cv("episodes_total", "Episodes ended, by result (success, failure, truncated, aborted).", "result"),
		aborted:       cv("aborted_episodes_total", "Episodes recorded as aborted, by reason (crash, unstable, stopped, error).", "reason"),
		blocked:       c("blocked_requests_total", "Browser requests to origins outside the allowlist, failed in the browser."),
		restarts:      c("browser_restarts_total", "Chromium processes restarted after a crash or a failed health check."),
		swaps:         c("weights_swaps_total", "New policy versions swapped into the inference server."),
		badInputs:     cv("bad_inputs_total", "Consumed records skipped, by topic kind (tasks, weights).", "kind"),
		produced:      cv("events_produced_total", "Events acknowledged by Kafka, by topic.", "topic"),
		produceErrors: cv("produce_errors_total", "Events Kafka did not acknowledge, by topic.", "topic"),
		unstable:      c("unstable_observations_total", "Observations published with stable=false (the detector's timeout)."),
		version: register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "policy_version",
			Help: "Weights version the inference server serves."}), &err),
		inference: register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "inference_seconds",
			Help: "ONNX Runtime time of the batch that held an action.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14)}), &err),
		batchSize: register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "batch_size",
			Help: "Size of the inference batch that held an action.", Buckets: prometheus.LinearBuckets(1, 2, 16)}), &err),
	}
	if err != nil {
		return nil, fmt.Errorf("unable to register actor metrics: %w", err)
	}
	return m, nil
}

// register registers c, or reuses the collector already registered under
// its name (a second actor in one process, as in bench rollout).
func register[C prometheus.Collector](reg prometheus.Registerer, c C, errp *error) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		*errp = errors.Join(*errp, err)
	}
	return c
}

// Stats are the actor's running totals (for tests and the benchmark).
type Stats struct {
	Steps           uint64 // actions executed
	Episodes        uint64 // episodes ended, aborted ones included
	Aborted         uint64 // episodes recorded as aborted
	Blocked         uint64 // requests failed by the origin allowlist
	Restarts        uint64 // browsers restarted
	Swaps           uint64 // weights versions swapped in
	Unstable        uint64 // observations published with stable=false
	ProduceErrors   uint64 // events Kafka did not acknowledge
	Produced        uint64 // events Kafka acknowledged
	Batches         uint64 // actions whose batch size was recorded
	BatchSizeSum    uint64
	InferenceMicros uint64 // sum over actions of their batch's inference time
}

type counters struct {
	steps, episodes, aborted, blocked, restarts, swaps, unstable atomic.Uint64
	produceErrors, produced, batches, batchSum, inferenceUs      atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Steps: c.steps.Load(), Episodes: c.episodes.Load(), Aborted: c.aborted.Load(), Blocked: c.blocked.Load(),
		Restarts: c.restarts.Load(), Swaps: c.swaps.Load(), Unstable: c.unstable.Load(),
		ProduceErrors: c.produceErrors.Load(), Produced: c.produced.Load(),
		Batches: c.batches.Load(), BatchSizeSum: c.batchSum.Load(), InferenceMicros: c.inferenceUs.Load(),
	}
}
