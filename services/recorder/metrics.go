package recorder

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/asyncwebrl/asyncwebrl/services/internal/prom"
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
	s := prom.New(reg, "recorder")
	m := &metrics{
		committed:    s.CounterVec("committed_records_total", "Records inserted into ClickHouse and committed, by topic (bad records included).", "topic"),
		bad:          s.CounterVec("bad_records_total", "Records that did not decode, kept in the bad_records table, by topic.", "topic"),
		insertErrors: s.Counter("insert_errors_total", "Failed INSERT attempts (each is retried)."),
		commitErrors: s.Counter("commit_errors_total", "Offset commits that failed after a successful insert (the records are re-delivered and de-duplicated)."),
		insertTime:   s.Histogram("insert_seconds", "Time to insert one batch, retries included.", prometheus.ExponentialBuckets(0.005, 2, 14)),
		batchRecords: s.Histogram("batch_records", "Records per inserted batch.", prometheus.ExponentialBuckets(1, 4, 10)),
		pending:      s.Gauge("pending_records", "Records polled but not yet committed."),
		clickhouseUp: s.Gauge("clickhouse_up", "1 when the last INSERT succeeded, 0 while inserts fail."),
		lagSnapshots: s.CounterVec("lag_snapshots_total", "Consumer lag snapshots, by result (ok, error).", "result"),
	}
	m.clickhouseUp.Set(1)
	return m, s.Err()
}
