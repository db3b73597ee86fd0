package recorder

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are per process and per topic only: per-record data belongs in
// ClickHouse, not in labels.
type metrics struct {
	committed    *prometheus.CounterVec // records whose offsets were committed, by topic
	bad          *prometheus.CounterVec // undecodable records kept in bad_records, by topic
	insertErrors prometheus.Counter
	commitErrors prometheus.Counter
	insertTime   prometheus.Histogram
	batchRecords prometheus.Histogram
	pending      prometheus.Gauge // polled but not yet committed
	clickhouseUp prometheus.Gauge
	lagSnapshots *prometheus.CounterVec // by result
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		committed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asyncwebrl_recorder_committed_records_total",
			Help: "Records inserted into ClickHouse and committed, by topic (bad records included).",
		}, []string{"topic"}),
		bad: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asyncwebrl_recorder_bad_records_total",
			Help: "Records that did not decode, kept in the bad_records table, by topic.",
		}, []string{"topic"}),
		insertErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "asyncwebrl_recorder_insert_errors_total",
			Help: "Failed INSERT attempts (each is retried).",
		}),
		commitErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "asyncwebrl_recorder_commit_errors_total",
			Help: "Offset commits that failed after a successful insert (the records are re-delivered and de-duplicated).",
		}),
		insertTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "asyncwebrl_recorder_insert_seconds",
			Help:    "Time to insert one batch, retries included.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
		}),
		batchRecords: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "asyncwebrl_recorder_batch_records",
			Help:    "Records per inserted batch.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 10),
		}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "asyncwebrl_recorder_pending_records",
			Help: "Records polled but not yet committed.",
		}),
		clickhouseUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "asyncwebrl_recorder_clickhouse_up",
			Help: "1 when the last INSERT succeeded, 0 while inserts fail.",
		}),
		lagSnapshots: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "asyncwebrl_recorder_lag_snapshots_total",
			Help: "Consumer lag snapshots, by result (ok, error).",
		}, []string{"result"}),
	}
	m.clickhouseUp.Set(1)
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.committed, m.bad, m.insertErrors, m.commitErrors, m.insertTime,
		m.batchRecords, m.pending, m.clickhouseUp, m.lagSnapshots} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("unable to register recorder metrics: %w", err)
		}
	}
	return m, nil
}
