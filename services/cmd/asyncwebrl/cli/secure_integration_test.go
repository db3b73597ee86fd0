package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

// TestIntegrationSecureKafkaRun: every target of a -target=all run works
// through a SASL_SSL listener with SCRAM-SHA-512 (webenv and actors act,
// the joiner joins, the learner publishes, the recorder archives, the
// reporter reports), the password given by its environment variable; and
// the password is in no log line, event, /metrics scrape, ClickHouse row
// or file the run wrote.
func TestIntegrationSecureKafkaRun(t *testing.T) {
	testenv.Parallel(t)
	b := testenv.PrivateSecureBroker(t)
	admin := freePort(t)
	// No -duration: the run is stopped with SIGTERM once the learner has
	// published twice and the recorder has archived, so a slow machine
	// (the learner's libtorch start under a loaded CI) waits longer
	// rather than failing; -duration is the ceiling only.
	r := startAllTargetsOn(t, "secure", "secure", []string{b.Addr}, b.Flags(), []string{"ASYNCWEBRL_KAFKA_SASL_PASSWORD=" + b.Password},
		"-admin-addr="+admin, "-duration=8m", "-executors=2", "-max-tier=easy", "-demos=4", "-bc-updates=5", "-batch-size=16", "-publish-every=1", "-stop-timeout=60s")
	secret := []byte(b.Password)

	// /metrics, scraped while the run lasts.
	var scrapes int
	deadline := time.After(10 * time.Minute)
	stopped := false
	for done := false; !done; {
		select {
		case <-r.p.Done:
			done = true
		case <-time.After(5 * time.Second):
			body, err := get("http://" + admin + "/metrics")
			if err == nil {
				scrapes++
				if bytes.Contains(body, secret) {
					t.Errorf("/metrics shows the password")
				}
			}
			if !stopped && scrapes >= 3 && len(r.p.Lines(t, "weights published")) >= 2 {
				if err := r.p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				stopped = true
			}
		case <-deadline:
			t.Fatal("the run did not end within 10 minutes")
		}
	}
	if r.p.Err != nil {
		t.Fatalf("exit: %v", r.p.Err)
	}
	if scrapes == 0 {
		t.Error("/metrics never answered")
	}
	if !r.p.LogContains(t, "stopped cleanly") {
		t.Error("the run did not stop cleanly")
	}

	// Every target did its work.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := analytics.Open(ctx, analyticstest.Config(t, r.db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	counts := map[string]uint64{}
	for _, tb := range []string{"actions", "rewards", "transitions", "weights"} {
		var n uint64
		if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT count() FROM %s.%s", r.db, tb)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts[tb] = n
		if n == 0 {
			t.Errorf("no %s recorded through the secure listener", tb)
		}
	}
	t.Logf("through SASL_SSL/SCRAM-SHA-512: %v, %d /metrics scrapes", counts, scrapes)

	// No event carries it.
	sec := config.KafkaSecurity{SASLMechanism: "scram-sha-512", SASLUser: b.User, SASLPassword: config.Secret(b.Password),
		TLS: true, TLSCAFile: b.CAFile}
	opts, err := kafka.Opts(&config.Config{Kafka: sec, TopicPrefix: r.prefix}, []string{b.Addr}, "secure-check", nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append(opts, kgo.ConsumeTopics(r.cat.Names()...), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	events := 0
	for idle := 0; idle < 2; {
		pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
		fetches := cl.PollFetches(pctx)
		pcancel()
		n := 0
		fetches.EachRecord(func(rec *kgo.Record) {
			n++
			if bytes.Contains(rec.Value, secret) || bytes.Contains(rec.Key, secret) {
				t.Errorf("an event on %s holds the password", rec.Topic)
			}
			for _, h := range rec.Headers {
				if bytes.Contains(h.Value, secret) {
					t.Errorf("a header of an event on %s holds the password", rec.Topic)
				}
			}
		})
		events += n
		if n == 0 {
			idle++
		}
	}
	if events == 0 {
		t.Fatal("read no events back")
	}

	// No table of ClickHouse holds it.
	host, port, _ := net.SplitHostPort(testenv.ClickHouseAddr(t))
	rows, err := conn.Query(ctx, fmt.Sprintf("SELECT name FROM system.tables WHERE database = '%s'", r.db))
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	for _, tb := range tables {
		out, err := exec.CommandContext(ctx, "clickhouse-client", "--host", host, "--port", port,
			"--query", fmt.Sprintf("SELECT * FROM %s.%s FORMAT TSV", r.db, tb)).CombinedOutput()
		if err != nil {
			t.Fatalf("dump %s: %v: %s", tb, err, out)
		}
		if bytes.Contains(out, secret) {
			t.Errorf("ClickHouse table %s holds the password", tb)
		}
	}

	// Nor its log, its report or any other file it wrote.
	files := 0
	err = filepath.WalkDir(r.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "asyncwebrl" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		if bytes.Contains(data, secret) {
			t.Errorf("%s holds the password", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("password absent from %d events, %d ClickHouse tables, %d files (the log and report among them)", events, len(tables), files)
	if len(r.p.Lines(t, "kafka_sasl_password")) == 0 {
		t.Error("the log has no config line naming the password field")
	}
}

func get(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
