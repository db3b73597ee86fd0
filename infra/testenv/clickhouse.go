package testenv

import (
	"fmt"
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
	repo string
	env  []string
}

// PrivateClickHouse starts a server with the same script and configuration
// as the local one and stops it when the test ends.
func PrivateClickHouse(t testing.TB) *ClickHouse {
	t.Helper()
	Integration(t)
	c := NewClickHouse(t.TempDir(), repoDir())
	c.Start(t)
	t.Cleanup(func() { _ = c.Down() })
	return c
}

// NewClickHouse prepares a server whose data lives in dir, on free
// loopback ports, run by repo's infra/clickhouse.sh; nothing starts until
// Up. It is PrivateClickHouse for a program (asyncwebrl drill).
func NewClickHouse(dir, repo string) *ClickHouse {
	tcp, http := freePort(), freePort()
	return &ClickHouse{
		Addr: "127.0.0.1:" + strconv.Itoa(tcp),
		repo: repo,
		env: append(os.Environ(),
			"ASYNCWEBRL_RUN_DIR="+dir,
			"CLICKHOUSE_TCP_PORT="+strconv.Itoa(tcp),
			"CLICKHOUSE_HTTP_PORT="+strconv.Itoa(http),
		),
	}
}

// Start starts the server (again) and waits until it answers.
func (c *ClickHouse) Start(t testing.TB) {
	t.Helper()
	t0 := time.Now()
	if err := c.Up(); err != nil {
		t.Fatal(err)
	}
	t.Logf("private ClickHouse ready on %s in %s", c.Addr, time.Since(t0).Round(100*time.Millisecond))
}

// Stop stops the server (SIGTERM, as infra/clickhouse.sh stop does).
func (c *ClickHouse) Stop(t testing.TB) {
	t.Helper()
	if err := c.Down(); err != nil {
		t.Fatal(err)
	}
}

// Up is Start for a program.
func (c *ClickHouse) Up() error {
	if out, err := c.script("start").CombinedOutput(); err != nil {
		return fmt.Errorf("unable to start the private ClickHouse: %w\n%s", err, out)
	}
	return nil
}

// Down is Stop for a program.
func (c *ClickHouse) Down() error {
	if out, err := c.script("stop").CombinedOutput(); err != nil {
		return fmt.Errorf("unable to stop the private ClickHouse: %w\n%s", err, out)
	}
	return nil
}

func (c *ClickHouse) script(arg string) *exec.Cmd {
	cmd := exec.Command("bash", filepath.Join(c.repo, "infra", "clickhouse.sh"), arg)
	cmd.Env = c.env
	return cmd
}
