package analytics_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// TestIntegrationMigrateIdempotent applies the migrations to a fresh
// database, then again (nothing to do), then again concurrently with a
// half-applied state, and refuses a migration whose SQL changed after it was
// applied.
func TestIntegrationMigrateIdempotent(t *testing.T) {
	conn := analyticstest.Open(t)
	db := testenv.Unique(t, "an")
	t.Cleanup(func() { analyticstest.Drop(t, conn, db) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	all, err := analytics.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	applied, err := analytics.Migrate(ctx, conn, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != len(all) {
		t.Fatalf("first run applied %d of %d migrations", len(applied), len(all))
	}
	applied, err = analytics.Migrate(ctx, conn, db)
	if err != nil || len(applied) != 0 {
		t.Fatalf("second run applied %d migrations (err %v), want none", len(applied), err)
	}

	// A run that crashed after the statements but before recording the
	// migration: forget the last one; re-applying must succeed.
	last := all[len(all)-1]
	if err := conn.Exec(ctx, fmt.Sprintf("ALTER TABLE %s.schema_migrations DELETE WHERE version = %d", db, last.Version)); err != nil {
		t.Fatal(err)
	}
	waitMutations(t, ctx, conn, db)
	applied, err = analytics.Migrate(ctx, conn, db)
	if err != nil || len(applied) != 1 || applied[0].Version != last.Version {
		t.Fatalf("re-run after a lost record applied %v (err %v), want only %d", applied, err, last.Version)
	}

	// A changed migration is refused, naming it.
	if err := conn.Exec(ctx, fmt.Sprintf("ALTER TABLE %s.schema_migrations UPDATE checksum = 'edited' WHERE version = 1", db)); err != nil {
		t.Fatal(err)
	}
	waitMutations(t, ctx, conn, db)
	_, err = analytics.Migrate(ctx, conn, db)
	if err == nil || !strings.Contains(err.Error(), "0001_events changed after it was applied") {
		t.Fatalf("Migrate after an edit = %v, want a refusal naming 0001_events", err)
	}

	if _, err := analytics.Migrate(ctx, conn, "bad-name; DROP"); err == nil {
		t.Fatal("a database name that is not an identifier was accepted")
	}
}

// waitMutations waits until ALTER ... DELETE/UPDATE on db have run (they
// are asynchronous in ClickHouse).
func waitMutations(t *testing.T, ctx context.Context, conn driver.Conn, db string) {
	t.Helper()
	for {
		var pending uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM system.mutations WHERE database = ? AND is_done = 0", db).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("mutations on %s still pending: %v", db, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestIntegrationEnumsMatchProto checks that every Enum8 column of the raw
// tables names the proto enum values by the same numbers: the recorder
// inserts the proto number as is.
func TestIntegrationEnumsMatchProto(t *testing.T) {
	db, conn := analyticstest.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	enums := map[string]protoreflect.EnumDescriptor{
		"source":      eventspb.Source(0).Descriptor(),
		"tier":        eventspb.Tier(0).Descriptor(),
		"split":       eventspb.Split(0).Descriptor(),
		"action_type": eventspb.ActionType(0).Descriptor(),
		"reason_code": eventspb.ReasonCode(0).Descriptor(),
	}
	rows, err := conn.Query(ctx, "SELECT table, name, type FROM system.columns WHERE database = ? AND type LIKE 'Enum8(%'", db)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var table, name, typ string
		if err := rows.Scan(&table, &name, &typ); err != nil {
			t.Fatal(err)
		}
		ed, ok := enums[name]
		if !ok {
			t.Errorf("%s.%s is an Enum8 with no proto enum to check against", table, name)
			continue
		}
		seen++
		prefix := strings.ToUpper(name) + "_"
		if name == "action_type" {
			prefix = "ACTION_TYPE_"
		}
		var want []string
		for i := 0; i < ed.Values().Len(); i++ {
			v := ed.Values().Get(i)
			want = append(want, fmt.Sprintf("'%s' = %d", strings.ToLower(strings.TrimPrefix(string(v.Name()), prefix)), v.Number()))
		}
		if w := "Enum8(" + strings.Join(want, ", ") + ")"; typ != w {
			t.Errorf("%s.%s is %s, want %s (add the new proto values with ALTER TABLE ... MODIFY COLUMN)", table, name, typ, w)
		}
	}
	if seen < 10 {
		t.Fatalf("checked %d enum columns, expected every raw table's", seen)
	}
}
