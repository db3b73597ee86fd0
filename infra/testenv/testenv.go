package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// Integration skips t when integration tests are switched off.
func Integration(t testing.TB) {
	t.Helper()
	if os.Getenv("ASYNCWEBRL_SKIP_INTEGRATION") == "1" {
		t.Skip("ASYNCWEBRL_SKIP_INTEGRATION=1")
	}
}

// Parallel is Integration, then t.Parallel: for an integration test that
// owns everything it touches (its own broker, or a topic prefix, groups
// and database of its own, free ports) and spends most of its time waiting
// on them (broker restarts, session timeouts, a run's duration), so that it
// overlaps the package's other such tests instead of queueing behind them.
// go test's -parallel (GOMAXPROCS by default) bounds how many overlap.
func Parallel(t *testing.T) {
	t.Helper()
	Integration(t)
	t.Parallel()
}

// Brokers returns the real broker's seeds, failing t when none answers.
func Brokers(t testing.TB) []string {
	t.Helper()
	Integration(t)
	seeds := strings.Split(getenv("ASYNCWEBRL_BROKERS", "127.0.0.1:19092"), ",")
	reachable(t, seeds[0], "Kafka", "infra/kafka.sh start")
	return seeds
}

// ClickHouseAddr returns the real ClickHouse server's native address.
func ClickHouseAddr(t testing.TB) string {
	t.Helper()
	Integration(t)
	addr := getenv("ASYNCWEBRL_CLICKHOUSE_ADDR", "127.0.0.1:19000")
	reachable(t, addr, "ClickHouse", "infra/clickhouse.sh start")
	return addr
}

// Unique returns a name unique to this test run, usable as a topic prefix,
// group id or database name: letters, digits and underscores only.
func Unique(t testing.TB, what string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, t.Name())
	if len(name) > 40 {
		name = name[:40]
	}
	return what + "_" + name + "_" + hex.EncodeToString(b[:])
}

func reachable(t testing.TB, addr, what, start string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		t.Fatalf("%s is not reachable at %s (%v): start it with `%s` or run `make test`, which does", what, addr, err, start)
	}
	_ = c.Close()
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// up runs start, a private server's Up, and logs how long the private what
// took to be ready on addr.
func up(t testing.TB, what, addr string, start func() error) {
	t.Helper()
	t0 := time.Now()
	if err := start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("private %s ready on %s in %s", what, addr, time.Since(t0).Round(100*time.Millisecond))
}
