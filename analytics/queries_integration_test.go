package analytics_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
)

// expected holds, per saved query, its CSV output on analyticstest.Dataset
// loaded twice (every event duplicated, as after a kill -9 re-delivery) and
// analyticstest.Lag, over [T0-1h, T0+1h) in one-minute buckets. The numbers
// were worked out by hand from the dataset's description; a query added to
// queries/ fails the test until it gets an entry here.
var expected = map[string]string{
	"dead_letters": `origin,topic,component,code,records,example
recorder,p.obs,recorder,decode_error,2,unable to decode Observation: proto: cannot parse invalid wire-format data
dlq,p.actions,joiner,stale,1,policy version 1 is 3 behind 4
`,
	// click: successes of 2, 3 and 3 steps, one truncated failure of 5;
	// shop: one success of 10 steps, the aborted episode left out.
	"episode_outcomes": `tier,family,successes,failures,truncated_failures,mean_length_successes,mean_length_failures
easy,click,3,1,1,2.67,5
hard,shop,1,0,0,10,0
`,
	"episode_lengths": `tier,family,episodes,mean_length,p50,p90,max_length,truncated_episodes,aborted_episodes,success_pct
easy,click,4,3.25,3,5,5,1,0,75
hard,shop,2,5.5,1,10,10,0,1,100
`,
	// rows and duplicates depend on whether ClickHouse merged the two
	// copies already; the test blanks them (see below).
	"event_counts": `table_name,rows,events,duplicates
actions,-,12,-
bad_records,-,2,-
dead_letters,-,1,-
episodes,-,6,-
obs,-,3,-
rewards,-,5,-
tasks,-,2,-
telemetry,-,3,-
transitions,-,2,-
weights,-,3,-
`,
	"lag": `group_id,topic,partition,committed,log_end,lag_records,snapshot_at
g1,p.actions,0,20,20,0,2026-01-15 10:03:00
g1,p.actions,1,3,5,2,2026-01-15 10:01:00
`,
	"lag_over_time": `bucket,group_id,lag_records
2026-01-15 10:01:00,g1,8
2026-01-15 10:03:00,g1,0
`,
	// Three versions of "pi", two minutes apart from T0 (the dataset's
	// formulas: loss 0.6 − 0.1v, KL 0.01v, clip 0.35 − 0.1v, entropy
	// 3.5 − 0.5v, 10v updates).
	"learner_stats": `policy_name,version,published_at,updates,loss,approx_kl,clip_frac,entropy
pi,1,2026-01-15 10:00:00,10,0.5,0.01,0.25,3
pi,2,2026-01-15 10:02:00,20,0.4,0.02,0.15,2.5
pi,3,2026-01-15 10:04:00,30,0.3,0.03,0.05,2
`,
	"learning_curve": `bucket,tier,episodes,success_pct
2026-01-15 10:01:00,easy,2,100
2026-01-15 10:06:00,easy,2,50
2026-01-15 10:06:00,hard,1,100
`,
	"staleness": `staleness,actions,pct,cumulative_pct
0,8,66.67,66.67
1,3,25,91.67
2,1,8.33,100
`,
	// By minute: 4 actions of v1 at 10:00:30 (v1 newest: 0); at 10:03 three
	// of v1 (v2 newest: 1) and two of v2 (0); at 10:05 one of v1 (v3
	// newest: 2) and two of v3 (0).
	"staleness_over_time": `bucket,actions,mean_staleness,max_staleness
2026-01-15 10:00:00,4,0,0
2026-01-15 10:03:00,5,0.6,1
2026-01-15 10:05:00,3,0.67,2
`,
	"success_rate": `family,site,split,tier,policy_version,episodes,successes,aborted,success_pct
click,s1,train,easy,1,4,3,0,75
shop,s2,test,hard,2,2,1,1,100
`,
	"throughput": `bucket,topic,events,events_per_s
2026-01-15 10:00:00,actions,4,0.07
2026-01-15 10:00:00,obs,3,0.05
2026-01-15 10:00:00,tasks,2,0.03
2026-01-15 10:00:00,weights,1,0.02
2026-01-15 10:01:00,episodes,2,0.03
2026-01-15 10:01:00,rewards,5,0.08
2026-01-15 10:01:00,telemetry,2,0.03
2026-01-15 10:02:00,dlq,1,0.02
2026-01-15 10:02:00,telemetry,1,0.02
2026-01-15 10:02:00,transitions,2,0.03
2026-01-15 10:02:00,weights,1,0.02
2026-01-15 10:03:00,actions,5,0.08
2026-01-15 10:04:00,weights,1,0.02
2026-01-15 10:05:00,actions,3,0.05
2026-01-15 10:06:00,episodes,4,0.07
`,
	"throughput_by_producer": `producer,topic,events,active_minutes,per_minute_avg,per_minute_peak
actor-1,actions,7,2,3.5,4
joiner-0,episodes,6,2,3,4
actor-1,rewards,5,1,5,5
actor-2,actions,5,2,2.5,3
actor-1,obs,3,1,3,3
learner-0,weights,3,3,1,1
actor-1,telemetry,2,1,2,2
joiner-0,transitions,2,1,2,2
scheduler,tasks,2,1,2,2
actor-2,telemetry,1,1,1,1
joiner-0,dlq,1,1,1,1
`,
	"utilization": `actor_id,mode,executors,windows,total_us,observe_pct,think_pct,act_pct,wait_pct,idle_pct,busy_pct,steps
actor-1,async,2,2,2000,5,10,5,25,55,20,3
actor-2,sync,1,1,1000,20,20,20,20,20,60,5
`,
	"utilization_over_time": `bucket,phase,pct
2026-01-15 10:01:00,act,5
2026-01-15 10:01:00,idle,55
2026-01-15 10:01:00,observe,5
2026-01-15 10:01:00,think,10
2026-01-15 10:01:00,wait,25
2026-01-15 10:02:00,act,20
2026-01-15 10:02:00,idle,20
2026-01-15 10:02:00,observe,20
2026-01-15 10:02:00,think,20
2026-01-15 10:02:00,wait,20
`,
}

// TestIntegrationSavedQueriesKnownDataset runs every saved query on the
// real server over the known dataset, inserted twice: the results must be
// those of one copy (the views and the raw-table queries are duplicate-proof).
func TestIntegrationSavedQueriesKnownDataset(t *testing.T) {
	db, conn := analyticstest.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	items := analyticstest.Dataset("p.")
	for i := 0; i < 2; i++ {
		bad, err := analyticstest.Load(ctx, conn, db, items)
		if err != nil {
			t.Fatal(err)
		}
		if bad != 2 {
			t.Fatalf("dataset has %d undecodable records, want 2", bad)
		}
	}
	if err := analytics.InsertLag(ctx, conn, db, analyticstest.Lag("p.")); err != nil {
		t.Fatal(err)
	}
	qs, err := analytics.Queries()
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != len(expected) {
		t.Errorf("%d saved queries, %d expectations: every query needs one", len(qs), len(expected))
	}
	p := analytics.Params{Since: analyticstest.T0.Add(-time.Hour), Until: analyticstest.T0.Add(time.Hour), Bucket: time.Minute}
	for _, q := range qs {
		t.Run(q.Name, func(t *testing.T) {
			want, ok := expected[q.Name]
			if !ok {
				t.Fatalf("no expected result for saved query %s", q.Name)
			}
			res, err := analytics.Run(ctx, conn, q, p)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := res.Write(&buf, "csv"); err != nil {
				t.Fatal(err)
			}
			// protobuf-go's error texts randomly use a non-breaking space
			// (so that nobody matches them); normalise it.
			got := strings.ReplaceAll(buf.String(), "\u00a0", " ")
			if q.Name == "event_counts" {
				got = blankColumns(t, got, "rows", "duplicates")
			}
			if got != want {
				t.Errorf("saved query %s returned\n%s\nwant\n%s", q.Name, got, want)
			}
		})
	}

	// The Grafana dashboard's panels run the same queries through the
	// ClickHouse data source's macros: as many rows as the saved query.
	panels, err := analytics.GrafanaPanels()
	if err != nil {
		t.Fatal(err)
	}
	for _, gp := range panels {
		t.Run("grafana "+gp.Query, func(t *testing.T) {
			at := func(ts time.Time) string {
				return "toDateTime('" + ts.UTC().Format("2006-01-02 15:04:05") + "', 'UTC')"
			}
			sql := strings.NewReplacer("$__fromTime", at(p.Since), "$__toTime", at(p.Until), "$__interval_s", "60").Replace(gp.SQL)
			res, err := analytics.Run(ctx, conn, analytics.Query{Name: "grafana " + gp.Query, SQL: sql}, p)
			if err != nil {
				t.Fatalf("%v\n%s", err, sql)
			}
			if want := strings.Count(expected[gp.Query], "\n") - 1; len(res.Rows) != want || want < 1 {
				t.Errorf("panel %q returned %d rows, its saved query %d", gp.Title, len(res.Rows), want)
			}
		})
	}

	// Outside the window nothing is returned.
	empty := analytics.Params{Since: analyticstest.T0.Add(time.Hour), Until: analyticstest.T0.Add(2 * time.Hour)}
	for _, q := range qs {
		res, err := analytics.Run(ctx, conn, q, empty)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range res.Rows {
			if q.Name == "event_counts" {
				if row[2] != uint64(0) {
					t.Errorf("event_counts outside the window: %v", row)
				}
				continue
			}
			t.Errorf("%s outside the window returned %v", q.Name, row)
		}
	}
}

// blankColumns replaces the named columns' values with "-".
func blankColumns(t *testing.T, csvText string, names ...string) string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range recs[0] {
		for _, n := range names {
			if h == n {
				for _, r := range recs[1:] {
					r[i] = "-"
				}
			}
		}
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.WriteAll(recs)
	return buf.String()
}
