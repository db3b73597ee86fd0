package analytics

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// integrationConn connects to the ClickHouse started by infra/clickhouse.sh
// (ASYNCWEBRL_CLICKHOUSE_ADDR, default 127.0.0.1:19000). An unreachable server
// fails the test, since a silent skip would hide a broken setup; set
// ASYNCWEBRL_SKIP_INTEGRATION=1 to skip integration tests instead.
func integrationConn(t *testing.T) driver.Conn {
	t.Helper()
	if os.Getenv("ASYNCWEBRL_SKIP_INTEGRATION") == "1" {
		t.Skip("ASYNCWEBRL_SKIP_INTEGRATION=1")
	}
	addr := os.Getenv("ASYNCWEBRL_CLICKHOUSE_ADDR")
	if addr == "" {
		addr = "127.0.0.1:19000"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := Open(ctx, Config{Addr: addr, Password: os.Getenv("ASYNCWEBRL_CLICKHOUSE_PASSWORD")})
	if err != nil {
		t.Fatalf("%v\nstart the local server with `infra/clickhouse.sh start` "+
			"(or set ASYNCWEBRL_SKIP_INTEGRATION=1 to skip integration tests)", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func TestIntegrationClickHouseRoundTrip(t *testing.T) {
	conn := integrationConn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if err := conn.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	db := fmt.Sprintf("asyncwebrl_it_%d", time.Now().UnixNano())
	if err := conn.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		// A fresh context: the test's may have expired by now.
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		if err := conn.Exec(cctx, "DROP DATABASE IF EXISTS "+db); err != nil {
			t.Errorf("drop database %s: %v", db, err)
		}
	})

	// Valid on 18.16 and current ClickHouse alike.
	table := db + ".events"
	ddl := "CREATE TABLE " + table + ` (
		date   Date,
		ts     DateTime,
		id     UInt64,
		actor  String,
		reward Float64,
		step   UInt32
	) ENGINE = MergeTree() PARTITION BY toYYYYMM(date) ORDER BY (actor, id)`
	if err := conn.Exec(ctx, ddl); err != nil {
		t.Fatalf("create table: %v", err)
	}

	const rows = 10000
	// Two months, so the rows land in two partitions (10,000s stays within each).
	jan := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	feb := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+table)
	if err != nil {
		t.Fatalf("prepare batch: %v", err)
	}
	var wantIDSum, wantStepSum uint64
	var wantReward float64
	var wantJan uint64
	for i := 0; i < rows; i++ {
		ts := jan.Add(time.Duration(i) * time.Second)
		if i%2 == 1 {
			ts = feb.Add(time.Duration(i) * time.Second)
		} else {
			wantJan++
		}
		id := uint64(i) + 1
		reward := float64(i%7) * 0.5 // multiples of 0.5 sum exactly in float64
		step := uint32(i % 100)
		if err := batch.Append(ts, ts, id, fmt.Sprintf("actor-%d", i%16), reward, step); err != nil {
			t.Fatalf("append row %d: %v", i, err)
		}
		wantIDSum += id
		wantReward += reward
		wantStepSum += uint64(step)
	}
	if err := batch.Send(); err != nil {
		t.Fatalf("send batch: %v", err)
	}

	var count, idSum, stepSum, actors uint64
	var rewardSum float64
	err = conn.QueryRow(ctx, "SELECT count(), sum(id), sum(step), uniqExact(actor), sum(reward) FROM "+table).
		Scan(&count, &idSum, &stepSum, &actors, &rewardSum)
	if err != nil {
		t.Fatalf("select aggregates: %v", err)
	}
	if count != rows || idSum != wantIDSum || stepSum != wantStepSum || actors != 16 || rewardSum != wantReward {
		t.Errorf("got count=%d sum(id)=%d sum(step)=%d actors=%d sum(reward)=%v, want %d %d %d 16 %v",
			count, idSum, stepSum, actors, rewardSum, rows, wantIDSum, wantStepSum, wantReward)
	}

	var janRows uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM "+table+" WHERE toYYYYMM(date) = 202401").Scan(&janRows); err != nil {
		t.Fatalf("select january: %v", err)
	}
	if janRows != wantJan {
		t.Errorf("january rows = %d, want %d", janRows, wantJan)
	}

	// One row back field by field: String, DateTime (UTC) and Float64 decode intact.
	var (
		gotDate, gotTS time.Time
		gotActor       string
		gotReward      float64
		gotStep        uint32
	)
	if err := conn.QueryRow(ctx, "SELECT date, ts, actor, reward, step FROM "+table+" WHERE id = 4").
		Scan(&gotDate, &gotTS, &gotActor, &gotReward, &gotStep); err != nil {
		t.Fatalf("select row: %v", err)
	}
	wantTS := feb.Add(3 * time.Second)
	if !gotTS.Equal(wantTS) || gotDate.Format(time.DateOnly) != "2024-02-01" ||
		gotActor != "actor-3" || gotReward != 1.5 || gotStep != 3 {
		t.Errorf("row id=4 = (%s, %s, %q, %v, %d), want (2024-02-01, %s, \"actor-3\", 1.5, 3)",
			gotDate.Format(time.DateOnly), gotTS.UTC(), gotActor, gotReward, gotStep, wantTS)
	}
}
