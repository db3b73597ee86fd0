package joiner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are counted per committed transaction only, so an aborted batch
// that is consumed again is never counted twice. Labels are reasons and
// results, never per-record data.
type metrics struct {
	consumed     prometheus.Counter
	joined       prometheus.Counter
	transitions  prometheus.Counter
	episodes     prometheus.Counter
	deadLetters  *prometheus.CounterVec
	drops        *prometheus.CounterVec
	abandoned    prometheus.Counter
	withoutTask  prometheus.Counter
	txns         *prometheus.CounterVec
	restored     prometheus.Counter
	restores     prometheus.Counter
	sessions     prometheus.Counter
	pending      prometheus.Gauge
	openEpisodes prometheus.Gauge
	partitions   prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	var err error
	c := func(name, help string) prometheus.Counter {
		return register(reg, prometheus.NewCounter(prometheus.CounterOpts{Namespace: "asyncwebrl", Subsystem: "joiner", Name: name, Help: help}), &err)
	}
	g := func(name, help string) prometheus.Gauge {
		return register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "asyncwebrl", Subsystem: "joiner", Name: name, Help: help}), &err)
	}
	cv := func(name, help, label string) *prometheus.CounterVec {
		return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "asyncwebrl", Subsystem: "joiner", Name: name, Help: help}, []string{label}), &err)
	}
	m := &metrics{
		consumed:     c("records_consumed_total", "Input records consumed in committed transactions."),
		joined:       c("events_joined_total", "Input events that became part of a transition."),
		transitions:  c("transitions_total", "Transitions written."),
		episodes:     c("episodes_total", "Episode summaries written."),
		deadLetters:  cv("dead_letters_total", "Input records written to the dlq, by reason code.", "reason"),
		drops:        cv("drops_total", "Input records dropped, by reason.", "reason"),
		abandoned:    c("episodes_abandoned_total", "Episodes closed without a done reward (no summary)."),
		withoutTask:  c("episodes_without_task_total", "Finished episodes without a task reference (no summary)."),
		txns:         cv("transactions_total", "Transactions ended, by result.", "result"),
		restored:     c("restored_events_total", "Undecided events restored from the changelog."),
		restores:     c("partition_restores_total", "Partitions whose join state was rebuilt from the changelog."),
		sessions:     c("session_rebuilds_total", "Kafka sessions lost (broker outage, stall) and built anew."),
		pending:      g("pending_events", "Accepted events whose fate is not decided yet."),
		openEpisodes: g("open_episodes", "Episodes held in join state."),
		partitions:   g("assigned_partitions", "Input partitions this member joins."),
	}
	if err != nil {
		return nil, fmt.Errorf("unable to register joiner metrics: %w", err)
	}
	return m, nil
}

// register registers c, or returns the collector already registered under
// its name (two joiners in one process share their counters).
func register[T prometheus.Collector](reg prometheus.Registerer, c T, errp *error) T {
	if err := reg.Register(c); err != nil {
		if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
			if existing, ok := are.ExistingCollector.(T); ok {
				return existing
			}
		}
		if *errp == nil {
			*errp = err
		}
	}
	return c
}

func (m *metrics) add(s Stats) {
	m.consumed.Add(float64(s.Consumed))
	m.joined.Add(float64(s.Joined))
	m.transitions.Add(float64(s.Transitions))
	m.episodes.Add(float64(s.Episodes))
	m.abandoned.Add(float64(s.EpisodesAbandoned))
	m.withoutTask.Add(float64(s.EpisodesWithoutTask))
	for code, n := range s.DeadLettered {
		m.deadLetters.WithLabelValues(strings.ToLower(strings.TrimPrefix(code.String(), "REASON_CODE_"))).Add(float64(n))
	}
	for reason, n := range s.Dropped {
		m.drops.WithLabelValues(reason).Add(float64(n))
	}
}
