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
		if name == "kind" {
			// Not a proto enum: what the recorder derives (kind.go).
			var want []string
			for _, k := range analytics.Kinds {
				want = append(want, fmt.Sprintf("'%s' = %d", k, k))
			}
			if w := "Enum8(" + strings.Join(want, ", ") + ")"; typ != w {
				t.Errorf("%s.kind is %s, want %s (analytics.Kinds)", table, typ, w)
			}
			seen++
			continue
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

// TestIntegrationRunsAndKindsOnAnExistingDatabase applies migration 0007
// (run and kind) to a database at version 6 that already holds rows: old
// rows read an empty run and the kind their stored columns give, the success
// view is back-filled from them, the per-minute views keep their old rows,
// and rows recorded after it are told apart by run.
func TestIntegrationRunsAndKindsOnAnExistingDatabase(t *testing.T) {
	admin := analyticstest.Open(t)
	db := testenv.Unique(t, "an")
	t.Cleanup(func() { analyticstest.Drop(t, admin, db) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := analytics.MigrateUpTo(ctx, admin, db, 6); err != nil {
		t.Fatal(err)
	}
	// Rows as a recorder before 0007 wrote them (INSERT ... SELECT: see
	// Migrate). At 10:01: a sampled training success, a held-out failure
	// and a demonstration's success; two actions, one of them a
	// demonstration's.
	exec := func(sql string) {
		t.Helper()
		if err := admin.Exec(ctx, strings.ReplaceAll(sql, "{db}", db)); err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
	}
	exec(`INSERT INTO {db}.episodes (event_id, produced_at, produced_at_ns, episode_id, source, tier, family, site, split, length, success, policy_versions_used, policy_name)
		SELECT 'e' || toString(number), toDateTime('2026-01-15 10:01:00', 'UTC'), 0, 'ep' || toString(number),
		       if(number = 2, 'demo', 'policy'), 'easy', 'click', 's1', if(number = 1, 'test', 'train'), 3,
		       number != 1, if(number = 2, emptyArrayUInt64(), [toUInt64(4)]), if(number = 2, 'oracle', 'pi')
		FROM system.numbers LIMIT 3`)
	exec(`INSERT INTO {db}.actions (event_id, produced_at, produced_at_ns, episode_id, source, action_type, policy_name, policy_version)
		SELECT 'a' || toString(number), toDateTime('2026-01-15 10:01:00', 'UTC'), 0, 'ep' || toString(number),
		       if(number = 1, 'demo', 'policy'), 'click', if(number = 1, 'oracle', 'pi'), 4
		FROM system.numbers LIMIT 2`)
	if _, err := analytics.Migrate(ctx, admin, db); err != nil {
		t.Fatal(err)
	}
	// A recorder built before 0007 goes on inserting without run and kind
	// (a held-out success): the defaults fill them, and the new view
	// counts it.
	exec(`INSERT INTO {db}.episodes (event_id, produced_at, produced_at_ns, episode_id, source, tier, family, site, split, length, success, policy_versions_used, policy_name)
		SELECT 'e3', toDateTime('2026-01-15 10:01:00', 'UTC'), 0, 'ep3', 'policy', 'easy', 'click', 's1', 'test', 3, 1, [toUInt64(4)], 'pi'`)
	kinds := func(table string) string {
		t.Helper()
		rows, err := admin.Query(ctx, "SELECT event_id, run, toString(kind) FROM "+db+"."+table+" ORDER BY event_id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, run, kind string
			if err := rows.Scan(&id, &run, &kind); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s:%q:%s", id, run, kind))
		}
		return strings.Join(out, " ")
	}
	if got, want := kinds("episodes"), `e0:"":sample e1:"":greedy e2:"":demo e3:"":greedy`; got != want {
		t.Errorf("old episodes read %s, want %s", got, want)
	}
	// An old action did not say whether it was greedy.
	if got, want := kinds("actions"), `a0:"":unspecified a1:"":demo`; got != want {
		t.Errorf("old actions read %s, want %s", got, want)
	}

	conn, err := analytics.Open(ctx, analyticstest.Config(t, db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	query := func(name, run string) string {
		t.Helper()
		q, err := analytics.LookupQuery(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := analytics.Run(ctx, conn, q, analytics.Params{Since: analyticstest.T0.Add(-time.Hour),
			Until: analyticstest.T0.Add(time.Hour), Bucket: time.Minute, Run: run})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := res.Write(&b, "csv"); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	// The success view was back-filled from the old episodes, by kind.
	if got, want := query("success_rate", ""), `family,site,split,tier,kind,policy_version,episodes,successes,aborted,success_pct
click,s1,train,easy,sample,4,1,1,0,100
click,s1,train,easy,demo,0,1,1,0,100
click,s1,test,easy,greedy,4,2,1,0,50
`; got != want {
		t.Errorf("success_rate after the migration:\n%s\nwant\n%s", got, want)
	}
	// The throughput view kept its old rows (run ''), and counts the new.
	if got, want := query("throughput", ""), "2026-01-15 10:01:00,actions,2,0.03\n2026-01-15 10:01:00,episodes,4,0.07\n"; !strings.HasSuffix(got, want) {
		t.Errorf("throughput after the migration:\n%s\nwant its rows to end with\n%s", got, want)
	}

	// A run recorded after the migration is told apart by its run.
	if _, err := analyticstest.Load(ctx, conn, db, analyticstest.Dataset("new.")); err != nil {
		t.Fatal(err)
	}
	if got := query("learning_curve", "new."); got != expected["learning_curve"] {
		t.Errorf("learning_curve --run new.:\n%s\nwant\n%s", got, expected["learning_curve"])
	}
	// Over all runs, the old rows and the new run's add up: click's old
	// sampled success of 3 steps and the dataset's successes of 2, 3 and 3
	// steps and truncated failure of 5; the held-out failure and success of
	// 3 steps; the old demonstration of 3 steps and the dataset's two of 2.
	if got, want := query("episode_outcomes", ""), `tier,family,kind,successes,failures,truncated_failures,mean_length_successes,mean_length_failures
easy,click,sample,4,1,1,2.75,5
easy,click,greedy,1,1,0,3,3
easy,click,demo,3,0,0,2.33,0
easy,miniwob/click-test,sample,1,1,0,1,4
hard,shop,greedy,1,0,0,10,0
`; got != want {
		t.Errorf("episode_outcomes over all runs:\n%s\nwant\n%s", got, want)
	}
}
