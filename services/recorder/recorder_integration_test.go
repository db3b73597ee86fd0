package recorder_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/loadtest/recorderload"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/recorder"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

type fixture struct {
	t       *testing.T
	ctx     context.Context
	seeds   []string
	cl      *kgo.Client
	adm     *kadm.Client
	catalog *topics.Catalog
	group   string
	db      string
}

func newFixture(t *testing.T, ctx context.Context) *fixture {
	t.Helper()
	kc := kafkatest.Real(t, "rec", topics.WithPartitions(3))
	f := &fixture{t: t, ctx: ctx, seeds: kc.Seeds, cl: kc.Admin, adm: kadm.NewClient(kc.Admin), catalog: kc.Catalog}
	f.group = kc.Catalog.Prefix + "recorder"
	f.db = testenv.Unique(t, "rec")
	admin := analyticstest.Open(t)
	t.Cleanup(func() { analyticstest.Drop(t, admin, f.db) })
	return f
}

func (f *fixture) newClient(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(f.seeds...)}, opts...)...)
}

func (f *fixture) produce(items []analyticstest.Item) {
	f.t.Helper()
	var recs []*kgo.Record
	for _, it := range items {
		recs = append(recs, &kgo.Record{Topic: f.catalog.Name(it.Topic), Key: []byte(it.Topic), Value: it.Record.Value})
	}
	if err := f.cl.ProduceSync(f.ctx, recs...).FirstErr(); err != nil {
		f.t.Fatal(err)
	}
}

// counts returns the distinct rows per table, through the server directly.
func (f *fixture) counts() map[string]uint64 {
	f.t.Helper()
	c, err := recorderload.Counts(f.ctx, analyticstest.Config(f.t, f.db))
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// waitCounts polls until the tables hold want (and only then returns).
func (f *fixture) waitCounts(want map[string]uint64) {
	f.t.Helper()
	var got map[string]uint64
	for f.ctx.Err() == nil {
		got = f.counts()
		ok := true
		for table, n := range want {
			if got[table] != n {
				ok = false
			}
		}
		if ok {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	f.t.Fatalf("tables never reached %v; last %v", want, got)
}

// committed returns the group's committed offsets summed over all topics.
func (f *fixture) committed() int64 {
	f.t.Helper()
	offs, err := f.adm.FetchOffsets(f.ctx, f.group)
	if err != nil {
		f.t.Fatal(err)
	}
	var sum int64
	offs.Each(func(o kadm.OffsetResponse) { sum += o.At })
	return sum
}

func datasetCounts(dup int) map[string]uint64 {
	return map[string]uint64{"actions": 15, "obs": 3, "rewards": 8, "telemetry": 3, "tasks": 2, "transitions": 2,
		"episodes": 10, "weights": 3, "dead_letters": 1, "bad_records": uint64(2 * dup)}
}

// TestIntegrationRecorderOutageAndDuplicates runs the recorder on the real
// broker and server: every event of the known dataset, sent twice, is
// stored once (bad records kept by coordinates); while ClickHouse is
// unreachable nothing is committed and /healthz says why; when it is back
// the pending records land and the offsets move on; a restarted recorder
// does not insert again what was committed.
func TestIntegrationRecorderOutageAndDuplicates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	f := newFixture(t, ctx)
	px := newProxy(t, testenv.ClickHouseAddr(t))
	ch := analyticstest.Config(t, f.db)
	ch.Addr = px.addr
	ch.DialTimeout = time.Second
	reg := prometheus.NewRegistry()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	newRecorder := func(reg prometheus.Registerer) *recorder.Recorder {
		r, err := recorder.New(f.catalog, ch, f.newClient, recorder.WithGroup(f.group), recorder.WithLogger(log),
			recorder.WithRegisterer(reg), recorder.WithLinger(100*time.Millisecond), recorder.WithLagInterval(200*time.Millisecond),
			recorder.WithBackoff(50*time.Millisecond, 500*time.Millisecond), recorder.WithInsertTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return r
	}
	rec := newRecorder(reg)
	stopped := false
	defer func() {
		if !stopped {
			_ = rec.Stop(context.Background())
		}
	}()

	items := analyticstest.Dataset(f.catalog.Prefix)
	f.produce(items)
	f.produce(items) // every event twice: a producer that retried everything
	f.waitCounts(datasetCounts(2))
	if err := rec.Healthy(ctx); err != nil {
		t.Fatalf("healthy recorder reports %v", err)
	}
	for f.committed() < int64(2*len(items)) {
		time.Sleep(50 * time.Millisecond)
	}
	before := f.committed()

	// ClickHouse goes away.
	px.Down()
	gen := recorderload.NewGenerator(2000, 7, time.Now().Add(-time.Minute), time.Minute)
	more := gen.Expected()
	if err := recorderload.Produce(ctx, f.cl, f.catalog, gen); err != nil {
		t.Fatal(err)
	}
	var herr error
	for herr == nil {
		herr = rec.Healthy(ctx)
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(herr.Error(), "ClickHouse inserts failing") {
		t.Fatalf("unhealthy for the wrong reason: %v", herr)
	}
	if !app.IsDegraded(herr) {
		t.Fatalf("a ClickHouse outage the recorder rides out is reported as a failure, not a degradation: %v", herr)
	}
	// An insert has failed: nothing of the new batch may be committed.
	if got := f.committed(); got != before {
		t.Fatalf("committed offsets moved from %d to %d while ClickHouse was down", before, got)
	}

	px.Up()
	want := datasetCounts(2)
	for table, n := range more {
		want[table] += uint64(n)
	}
	f.waitCounts(want)
	for f.committed() < before+int64(gen.Len()) {
		time.Sleep(50 * time.Millisecond)
	}
	for rec.Healthy(ctx) != nil {
		time.Sleep(50 * time.Millisecond)
	}
	if v := counter(t, reg, "asyncwebrl_recorder_insert_errors_total"); v < 1 {
		t.Errorf("insert errors metric = %v, want >= 1", v)
	}
	if v := counter(t, reg, "asyncwebrl_recorder_bad_records_total"); v != 4 {
		t.Errorf("bad records metric = %v, want 4", v)
	}

	// Lag snapshots were taken of our group on our topics.
	admin := analyticstest.Open(t)
	var snaps uint64
	for snaps == 0 {
		if err := admin.QueryRow(ctx, fmt.Sprintf("SELECT count() FROM %s.consumer_lag WHERE group_id = ? AND topic LIKE ?", f.db),
			f.group, f.catalog.Prefix+"%").Scan(&snaps); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Every row the recorder wrote names its run: the catalog's prefix.
	for _, table := range []string{"tasks", "obs", "actions", "rewards", "telemetry", "transitions", "episodes", "weights",
		"dead_letters", "bad_records", "event_log", "consumer_lag"} {
		var rows, ours uint64
		if err := admin.QueryRow(ctx, fmt.Sprintf("SELECT count(), countIf(run = ?) FROM %s.%s", f.db, table), f.catalog.Prefix).
			Scan(&rows, &ours); err != nil {
			t.Fatal(err)
		}
		if rows == 0 || ours != rows {
			t.Errorf("%s: %d of %d rows name run %q", table, ours, rows, f.catalog.Prefix)
		}
	}

	// A clean stop commits everything; a new recorder of the group inserts
	// nothing again.
	if err := rec.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped = true
	rawRows := func() uint64 {
		var n uint64
		if err := admin.QueryRow(ctx, "SELECT count() FROM "+f.db+".actions").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	rowsBefore := rawRows()
	rec2 := newRecorder(nil)
	f.produce(items[:1]) // one more copy of a weights event, to see the new member consume
	for rec2.Stats().Records < 1 {
		time.Sleep(50 * time.Millisecond)
	}
	if err := rec2.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if st := rec2.Stats(); st.Records != 1 {
		t.Errorf("restarted recorder consumed %d records, want only the 1 new one", st.Records)
	}
	if got := rawRows(); got != rowsBefore {
		t.Errorf("restarted recorder re-inserted actions: %d rows, was %d", got, rowsBefore)
	}
	f.waitCounts(want)
}

func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
