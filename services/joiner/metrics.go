package joiner

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/asyncwebrl/asyncwebrl/services/internal/prom"
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
	s := prom.New(reg, "joiner")
	m := &metrics{
		consumed:     s.Counter("records_consumed_total", "Input records consumed in committed transactions."),
		joined:       s.Counter("events_joined_total", "Input events that became part of a transition."),
		transitions:  s.Counter("transitions_total", "Transitions written."),
		episodes:     s.Counter("episodes_total", "Episode summaries written."),
		deadLetters:  s.CounterVec("dead_letters_total", "Input records written to the dlq, by reason code.", "reason"),
		drops:        s.CounterVec("drops_total", "Input records dropped, by reason.", "reason"),
		abandoned:    s.Counter("episodes_abandoned_total", "Episodes closed without a done reward (no summary)."),
		withoutTask:  s.Counter("episodes_without_task_total", "Finished episodes without a task reference (no summary)."),
		txns:         s.CounterVec("transactions_total", "Transactions ended, by result.", "result"),
		restored:     s.Counter("restored_events_total", "Undecided events restored from the changelog."),
		restores:     s.Counter("partition_restores_total", "Partitions whose join state was rebuilt from the changelog."),
		sessions:     s.Counter("session_rebuilds_total", "Kafka sessions lost (broker outage, stall) and built anew."),
		pending:      s.Gauge("pending_events", "Accepted events whose fate is not decided yet."),
		openEpisodes: s.Gauge("open_episodes", "Episodes held in join state."),
		partitions:   s.Gauge("assigned_partitions", "Input partitions this member joins."),
	}
	return m, s.Err()
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
