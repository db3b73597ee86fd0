package analytics_test

import (
	"testing"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
)

// BenchmarkRowsAdd is the recorder's decode cost per record (protobuf
// unmarshal, schema validation, flattening into columns) on the known
// dataset's mix of events.
func BenchmarkRowsAdd(b *testing.B) {
	items := analyticstest.Dataset("p.")
	rows := analytics.NewRows()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		it := &items[i%len(items)]
		_ = rows.Add(it.Topic, &it.Record)
		if rows.Len() >= 50_000 {
			rows.Reset()
		}
	}
}
