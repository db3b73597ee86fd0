package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/loadtest/recorderload"
)

// TestIntegrationRecorderMillionEvents is the recorder's acceptance test:
// 1,000,000 synthetic events (ASYNCWEBRL_RECORDER_EVENTS overrides) go
// through the real binary, `asyncwebrl -target=recorder`, run as OS
// processes against the real broker and server. Recorder A is killed with
// SIGKILL once ~30% of the rows are in; recorder B takes over the group, and
// ClickHouse itself is restarted (infra/clickhouse.sh stop/start) once ~60%
// are in. At the end every table must hold exactly the generated events,
// counted by distinct event id, the materialized views must count them
// exactly too, and the group's lag must be 0. The same run then measures
// the recorder's insert rate against a bare clickhouse-go batch insert of
// the same rows (recorderload.Bench) and prints both with their ratio.
func TestIntegrationRecorderMillionEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test restarts a ClickHouse server of its own and takes minutes")
	}
	n := 1_000_000
	if v := os.Getenv("ASYNCWEBRL_RECORDER_EVENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			t.Fatalf("invalid ASYNCWEBRL_RECORDER_EVENTS=%q", v)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	repo := repoRoot(t)
	// The test restarts its server: a private one, so the other packages'
	// tests (go test runs them at the same time) keep the shared server.
	// Every analyticstest helper below reaches it through the variable.
	ch := testenv.PrivateClickHouse(t)
	t.Setenv("ASYNCWEBRL_CLICKHOUSE_ADDR", ch.Addr)
	f := newFixture(t, ctx)
	bin := buildBinary(t, repo)
	admin := analyticstest.Open(t)

	gen := recorderload.NewGenerator(n, 42, time.Now().Add(-10*time.Minute), 10*time.Minute)
	want := gen.Expected()
	t0 := time.Now()
	if err := recorderload.Produce(ctx, f.cl, f.catalog, gen); err != nil {
		t.Fatal(err)
	}
	t.Logf("produced %d events in %s: %v", n, time.Since(t0).Round(time.Millisecond), want)

	logs := t.TempDir()
	start := func(name string) *exec.Cmd {
		cmd := exec.Command(bin, "-target=recorder", "-brokers="+strings.Join(f.seeds, ","),
			"-topic-prefix="+f.catalog.Prefix, "-topic-partitions=3", "-clickhouse-addr="+analyticstest.Config(t, "").Addr,
			"-clickhouse-database="+f.db, "-admin-addr="+freeAddr(t), "-instance-id="+name, "-stop-timeout=60s")
		cmd.Env = append(os.Environ(), "ASYNCWEBRL_RECORDER_SESSION_TIMEOUT=6s")
		out, err := os.Create(filepath.Join(logs, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = out.Close()
			if t.Failed() {
				b, _ := os.ReadFile(out.Name())
				t.Logf("%s log (last 3000 bytes):\n%s", name, tail(b, 3000))
			}
		})
		return cmd
	}
	stored := func() uint64 { return storedRows(t, ctx, admin, f.db) }
	waitStored := func(atLeast uint64, what string) {
		for stored() < atLeast {
			if ctx.Err() != nil {
				t.Fatalf("waiting for %d rows before %s: %v", atLeast, what, ctx.Err())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	runStart := time.Now()
	a := start("recorder-A")
	waitStored(uint64(n)*3/10, "kill -9")
	if err := a.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()
	atKill := stored()
	t.Logf("recorder-A killed with SIGKILL at %d stored rows (%s after start)", atKill, time.Since(runStart).Round(time.Millisecond))

	b := start("recorder-B")
	waitStored(uint64(n)*6/10, "the ClickHouse restart")
	t1 := time.Now()
	ch.Stop(t)
	ch.Start(t)
	t.Logf("ClickHouse restarted (down %s)", time.Since(t1).Round(time.Millisecond))

	// Exactly the generated events, by distinct id, in every table.
	var got map[string]uint64
	for {
		got, _ = recorderload.Counts(ctx, analyticstest.Config(t, f.db))
		if equalCounts(got, want) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("tables never held exactly the events:\n got %v\nwant %v", got, want)
		}
		time.Sleep(500 * time.Millisecond)
	}
	elapsed := time.Since(runStart)
	raw := stored()
	// Raw tables hold the decodable events; undecodable ones are in
	// bad_records. Merges may already have removed every duplicate.
	decodable := uint64(n - want["bad_records"])
	t.Logf("all %d events stored exactly once by id after %s, through kill -9 and a ClickHouse restart: %.0f events/s overall; %d raw rows for %d decodable events (%d re-delivered duplicates not merged yet)",
		n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), raw, decodable, int64(raw)-int64(decodable))
	if raw < decodable {
		t.Fatalf("%d raw rows < %d decodable events", raw, decodable)
	}

	// Every offset committed: the group's lag is 0 on every partition.
	for {
		lag := groupLag(t, ctx, f)
		if lag == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("group lag stayed %d", lag)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The materialized views count exactly, duplicates and all.
	checkViews(t, ctx, f.db, want)

	if err := b.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(); err != nil {
		t.Errorf("recorder-B did not stop cleanly on SIGTERM: %v", err)
	}
	// Evidence, not an assertion (how many attempts fail depends on timing):
	// what recorder-B went through while ClickHouse was down.
	if blog, err := os.ReadFile(filepath.Join(logs, "recorder-B.log")); err == nil {
		t.Logf("recorder-B log: %d failed insert attempts retried, %d lag snapshots skipped, clean stop: %v",
			bytes.Count(blog, []byte("insert failed; retrying")), bytes.Count(blog, []byte("lag snapshot skipped")),
			bytes.Contains(blog, []byte("stopped cleanly")))
	}

	// The insert rate, against a bare clickhouse-go insert of the same rows.
	res, err := recorderload.Bench(ctx, recorderload.BenchConfig{
		Catalog: f.catalog, ClickHouse: analyticstest.Config(t, ""), NewClient: f.newClient,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("insert rate: recorder %.0f rows/s (%s) vs bare clickhouse-go batch insert %.0f rows/s (%s): ratio %.2f (goal >= 0.5)",
		res.RecorderRate, res.Recorder.Round(time.Millisecond), res.BareRate, res.Bare.Round(time.Millisecond), res.Ratio)
	if !equalCounts(res.Tables, want) {
		t.Errorf("benchmark databases hold %v, want %v", res.Tables, want)
	}
	if v := os.Getenv("ASYNCWEBRL_RECORDER_MIN_RATIO"); v != "" {
		if minRatio, _ := strconv.ParseFloat(v, 64); res.Ratio < minRatio {
			t.Errorf("ratio %.2f below ASYNCWEBRL_RECORDER_MIN_RATIO=%s", res.Ratio, v)
		}
	}
}

func equalCounts(got map[string]uint64, want map[string]int) bool {
	for table, n := range want {
		if got[table] != uint64(n) {
			return false
		}
	}
	return len(want) > 0
}

// storedRows is the raw rows of the event tables (duplicates included), from
// system.parts: cheap enough to poll.
func storedRows(t *testing.T, ctx context.Context, conn driver.Conn, db string) uint64 {
	var rows uint64
	tables := make([]string, 0, len(analytics.EventTables))
	for _, tb := range analytics.EventTables {
		tables = append(tables, "'"+tb+"'")
	}
	q := fmt.Sprintf("SELECT sum(rows) FROM system.parts WHERE database = ? AND active AND table IN (%s)", strings.Join(tables, ","))
	if err := conn.QueryRow(ctx, q, db).Scan(&rows); err != nil {
		// ClickHouse is restarting: the caller polls again.
		return 0
	}
	return rows
}

// groupLag is the records of the catalog's event topics not yet committed
// by the recorder group.
func groupLag(t *testing.T, ctx context.Context, f *fixture) int64 {
	lags, err := f.adm.Lag(ctx, f.group)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, g := range lags {
		for _, l := range g.Lag.Sorted() {
			total += l.Lag
		}
	}
	return total
}

// checkViews compares what the saved queries read from the materialized
// views with the generated counts.
func checkViews(t *testing.T, ctx context.Context, db string, want map[string]int) {
	t.Helper()
	conn, err := analytics.Open(ctx, analyticstest.Config(t, db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	p := analytics.Params{Since: time.Unix(0, 0), Until: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), Bucket: 24 * time.Hour}
	sum := func(query, column string) uint64 {
		q, err := analytics.LookupQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		res, err := analytics.Run(ctx, conn, q, p)
		if err != nil {
			t.Fatal(err)
		}
		var s uint64
		for i, c := range res.Columns {
			if c == column {
				for _, row := range res.Rows {
					s += row[i].(uint64)
				}
			}
		}
		return s
	}
	events := 0
	for table, n := range want {
		if table != analytics.TableBadRecords {
			events += n
		}
	}
	checks := []struct {
		query, column string
		want          int
	}{
		{"throughput_by_producer", "events", events},
		{"staleness", "actions", want[analytics.TableActions]},
		{"utilization", "windows", want[analytics.TableTelemetry]},
		{"success_rate", "episodes", want[analytics.TableEpisodes]},
		{"episode_lengths", "episodes", want[analytics.TableEpisodes]},
	}
	for _, c := range checks {
		if got := sum(c.query, c.column); got != uint64(c.want) {
			t.Errorf("%s: sum(%s) = %d, want %d (a view counted a duplicate or missed a row)", c.query, c.column, got, c.want)
		}
	}
}

func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}

func buildBinary(t *testing.T, repo string) string {
	bin := filepath.Join(t.TempDir(), "asyncwebrl")
	cmd := exec.Command("go", "build", "-o", bin, "./services/cmd/asyncwebrl")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return b
}
