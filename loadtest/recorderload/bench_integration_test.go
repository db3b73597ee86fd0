package recorderload_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/loadtest/recorderload"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestIntegrationBenchSmall runs the benchmark end to end on 20,000 events:
// both sides must store exactly the generated rows.
func TestIntegrationBenchSmall(t *testing.T) {
	kc := kafkatest.Real(t, "rl", topics.WithPartitions(3))
	newClient, cl, catalog := kc.NewClient, kc.Admin, kc.Catalog
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	gen := recorderload.NewGenerator(20_000, 1, time.Now().Add(-3*time.Minute), 3*time.Minute)
	want := gen.Expected()
	if err := recorderload.Produce(ctx, cl, catalog, gen); err != nil {
		t.Fatal(err)
	}
	res, err := recorderload.Bench(ctx, recorderload.BenchConfig{
		Catalog: catalog, ClickHouse: analyticstest.Config(t, ""), NewClient: newClient, BatchRecords: 5000,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	if res.Records != 20_000 {
		t.Errorf("benchmark saw %d records, want 20000", res.Records)
	}
	for table, n := range want {
		if res.Tables[table] != uint64(n) {
			t.Errorf("%s: %d distinct rows, want %d", table, res.Tables[table], n)
		}
	}
	if len(res.Tables) != len(analytics.EventTables)+1 {
		t.Errorf("tables %v", res.Tables)
	}
}
