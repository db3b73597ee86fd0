package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// ClickHouse is a ClickHouse server of the test's own, started by
// infra/clickhouse.sh in a private run directory on free loopback ports. A
// test that stops and restarts its server uses one, so the tests of other
// packages, which go test runs at the same time, keep the shared server.
type ClickHouse struct {
	// Addr is its native protocol address, host:port.
	Addr string
	env  []string
}

// PrivateClickHouse starts a server with the same script and configuration
// as the local one and stops it when the test ends.
func PrivateClickHouse(t testing.TB) *ClickHouse {
	t.Helper()
	Integration(t)
	tcp, http := FreePort(t), FreePort(t)
	c := &ClickHouse{
		Addr: "127.0.0.1:" + strconv.Itoa(tcp),
		env: append(os.Environ(),
			"ASYNCWEBRL_RUN_DIR="+t.TempDir(),
			"CLICKHOUSE_TCP_PORT="+strconv.Itoa(tcp),
			"CLICKHOUSE_HTTP_PORT="+strconv.Itoa(http),
		),
	}
	c.Start(t)
	t.Cleanup(func() { _ = c.script("stop").Run() })
	return c
}

// Start starts the server (again) and waits until it answers.
func (c *ClickHouse) Start(t testing.TB) {
	t.Helper()
	t0 := time.Now()
	if out, err := c.script("start").CombinedOutput(); err != nil {
		t.Fatalf("unable to start the private ClickHouse: %v\n%s", err, out)
	}
	t.Logf("private ClickHouse ready on %s in %s", c.Addr, time.Since(t0).Round(100*time.Millisecond))
}

// Stop stops the server (SIGTERM, as infra/clickhouse.sh stop does).
func (c *ClickHouse) Stop(t testing.TB) {
	t.Helper()
	if out, err := c.script("stop").CombinedOutput(); err != nil {
		t.Fatalf("unable to stop the private ClickHouse: %v\n%s", err, out)
	}
}

func (c *ClickHouse) script(arg string) *exec.Cmd {
	cmd := exec.Command("bash", filepath.Join(repoDir(), "infra", "clickhouse.sh"), arg)
	cmd.Env = c.env
	return cmd
}
