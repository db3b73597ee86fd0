package testenv

import (
	"testing"

	"github.com/asyncwebrl/asyncwebrl/infra/launch"
)

// ClickHouse is a ClickHouse server of the test's own (launch.ClickHouse).
// A test that stops and restarts its server uses one, so the tests of other
// packages, which go test runs at the same time, keep the shared server.
type ClickHouse struct{ *launch.ClickHouse }

// PrivateClickHouse starts a server with the same script and configuration
// as the local one and stops it when the test ends.
func PrivateClickHouse(t testing.TB) *ClickHouse {
	t.Helper()
	Integration(t)
	c := &ClickHouse{launch.NewClickHouse(t.TempDir(), launch.RepoDir())}
	c.Start(t)
	t.Cleanup(func() { _ = c.Down() })
	return c
}

// Start starts the server (again) and waits until it answers.
func (c *ClickHouse) Start(t testing.TB) {
	t.Helper()
	up(t, "ClickHouse", c.Addr, c.Up)
}

// Stop stops the server (SIGTERM, as infra/clickhouse.sh stop does).
func (c *ClickHouse) Stop(t testing.TB) {
	t.Helper()
	if err := c.Down(); err != nil {
		t.Fatal(err)
	}
}
