package actor

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/asyncwebrl/asyncwebrl/services/internal/prom"
)

// metrics are the actor's Prometheus series. Labels are limited to topic,
// mode and fixed reasons; per-step data goes to the telemetry topic.
type metrics struct {
	steps         *prometheus.CounterVec
	episodes      *prometheus.CounterVec
	aborted       *prometheus.CounterVec
	blocked       prometheus.Counter
	restarts      prometheus.Counter
	retries       *prometheus.CounterVec
	swaps         prometheus.Counter
	badInputs     *prometheus.CounterVec
	produced      *prometheus.CounterVec
	produceErrors *prometheus.CounterVec
	unstable      prometheus.Counter
	version       prometheus.Gauge
	inference     prometheus.Histogram
	batchSize     prometheus.Histogram
	deadLetters   *prometheus.CounterVec
	lmTokens      *prometheus.CounterVec
	lmRequest     prometheus.Histogram
	lmInvalid     prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	s := prom.New(reg, "actor")
	m := &metrics{
		steps:         s.CounterVec("steps_total", "Actions executed, by mode.", "mode"),
		episodes:      s.CounterVec("episodes_total", "Episodes ended, by result (success, failure, truncated, aborted).", "result"),
		aborted:       s.CounterVec("aborted_episodes_total", "Episodes recorded as aborted, by reason (crash, unstable, stopped, error).", "reason"),
		blocked:       s.Counter("blocked_requests_total", "Browser requests to origins outside the allowlist, failed in the browser."),
		restarts:      s.Counter("browser_restarts_total", "Chromium processes restarted after a crash or a failed health check."),
		retries:       s.CounterVec("crash_retries_total", "Tasks of episodes a crashed browser or lost tab cut: retried on a fresh tab, or given_up after the last retry.", "result"),
		swaps:         s.Counter("weights_swaps_total", "New policy versions swapped into the inference server."),
		badInputs:     s.CounterVec("bad_inputs_total", "Consumed records skipped, by topic kind (tasks, weights).", "kind"),
		produced:      s.CounterVec("events_produced_total", "Events acknowledged by Kafka, by topic.", "topic"),
		produceErrors: s.CounterVec("produce_errors_total", "Events Kafka did not acknowledge, by topic.", "topic"),
		unstable:      s.Counter("unstable_observations_total", "Observations published with stable=false (the detector's timeout)."),
		version:       s.Gauge("policy_version", "Weights version the inference server serves."),
		inference:     s.Histogram("inference_seconds", "ONNX Runtime time of the batch that held an action.", prometheus.ExponentialBuckets(0.0001, 2, 14)),
		batchSize:     s.Histogram("batch_size", "Size of the inference batch that held an action.", prometheus.LinearBuckets(1, 2, 16)),
		deadLetters:   s.CounterVec("dead_letters_total", "Policy replies the actor could not use, dead-lettered, by reason code.", "reason"),
		lmTokens:      s.CounterVec("lm_tokens_total", "Tokens of the language-model backends' requests, by kind (prompt, output).", "kind"),
		lmRequest:     s.Histogram("lm_request_seconds", "Time of the model server request that answered a language-model decision.", prometheus.ExponentialBuckets(0.01, 2, 14)),
		lmInvalid:     s.Counter("lm_invalid_actions_total", "Language-model replies that named no valid action on the page (run as a noop)."),
	}
	return m, s.Err()
}

// Stats are the actor's running totals (for tests and the benchmark).
type Stats struct {
	Steps           uint64 // actions executed
	Episodes        uint64 // episodes ended, aborted ones included
	Aborted         uint64 // episodes recorded as aborted
	Blocked         uint64 // requests failed by the origin allowlist
	Restarts        uint64 // browsers restarted
	Retried         uint64 // lost episodes whose task was queued again (WithCrashRetries)
	GaveUp          uint64 // lost episodes whose task had no retry left
	Swaps           uint64 // weights versions swapped in
	Unstable        uint64 // observations published with stable=false
	ProduceErrors   uint64 // events Kafka did not acknowledge
	Produced        uint64 // events Kafka acknowledged
	Batches         uint64 // actions whose batch size was recorded
	BatchSizeSum    uint64
	InferenceMicros uint64 // sum over actions of their batch's inference time
	DeadLetters     uint64 // policy replies dead-lettered
	LMInvalid       uint64 // language-model replies with no valid action
	LMPromptTokens  uint64 // language-model prompt tokens (as the server counted)
	LMOutputTokens  uint64 // language-model output tokens
}

type counters struct {
	steps, episodes, aborted, blocked, restarts, swaps, unstable atomic.Uint64
	retried, gaveUp                                              atomic.Uint64
	produceErrors, produced, batches, batchSum, inferenceUs      atomic.Uint64
	deadLetters, lmInvalid, lmPrompt, lmOutput                   atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Steps: c.steps.Load(), Episodes: c.episodes.Load(), Aborted: c.aborted.Load(), Blocked: c.blocked.Load(),
		Restarts: c.restarts.Load(), Retried: c.retried.Load(), GaveUp: c.gaveUp.Load(), Swaps: c.swaps.Load(), Unstable: c.unstable.Load(),
		ProduceErrors: c.produceErrors.Load(), Produced: c.produced.Load(),
		Batches: c.batches.Load(), BatchSizeSum: c.batchSum.Load(), InferenceMicros: c.inferenceUs.Load(),
		DeadLetters: c.deadLetters.Load(), LMInvalid: c.lmInvalid.Load(), LMPromptTokens: c.lmPrompt.Load(), LMOutputTokens: c.lmOutput.Load(),
	}
}
