package analyticstest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
)

// Config returns the connection config of the real ClickHouse server for
// database (failing t when the server is not reachable).
func Config(t testing.TB, database string) analytics.Config {
	t.Helper()
	return analytics.Config{
		Addr:     testenv.ClickHouseAddr(t),
		Database: database,
		Password: os.Getenv("ASYNCWEBRL_CLICKHOUSE_PASSWORD"),
	}
}

// Open connects to the real server's default database.
func Open(t testing.TB) driver.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := analytics.Open(ctx, Config(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// Database creates and migrates a database of its own for t, dropped when t
// ends, and returns its name with a connection whose default database it is.
func Database(t testing.TB) (string, driver.Conn) {
	t.Helper()
	admin := Open(t)
	db := testenv.Unique(t, "an")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := analytics.Migrate(ctx, admin, db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Drop(t, admin, db) })
	conn, err := analytics.Open(ctx, Config(t, db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return db, conn
}

// Drop drops database, reporting (not failing on) an error: it runs in
// cleanups, after the test's verdict.
func Drop(t testing.TB, conn driver.Conn, database string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+database); err != nil {
		t.Logf("drop database %s: %v", database, err)
	}
}

// Load inserts items into database through analytics.Rows (made with
// opts), as the recorder would, and returns how many did not decode.
func Load(ctx context.Context, conn driver.Conn, database string, items []Item, opts ...analytics.RowsOption) (bad int, err error) {
	rows := analytics.NewRows(opts...)
	for i := range items {
		if rows.Add(items[i].Topic, &items[i].Record) != nil {
			bad++
		}
	}
	return bad, rows.Insert(ctx, conn, database)
}
