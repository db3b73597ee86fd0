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
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
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
	// click (sample): successes of 2, 3 and 3 steps, one truncated failure
	// of 5; its two demonstrations (2 steps) on a row of their own;
	// miniwob/click-test: a success of 1 step, a failure of 4; shop (held
	// out: greedy): one success of 10 steps, the aborted episode left out.
	// Kinds sort in their Enum8 order: sample, greedy, demo.
	"episode_outcomes": `tier,family,kind,successes,failures,truncated_failures,mean_length_successes,mean_length_failures
easy,click,sample,3,1,1,2.67,5
easy,click,demo,2,0,0,2,0
easy,miniwob/click-test,sample,1,1,0,1,4
hard,shop,greedy,1,0,0,10,0
`,
	"episode_lengths": `tier,family,kind,episodes,mean_length,p50,p90,max_length,truncated_episodes,aborted_episodes,success_pct
easy,click,sample,4,3.25,3,5,5,1,0,75
easy,click,demo,2,2,2,2,2,0,0,100
easy,miniwob/click-test,sample,2,2.5,1,4,4,0,0,50
hard,shop,greedy,2,5.5,1,10,10,0,1,100
`,
	// click's facts are those its episodes met by their end: clicked and
	// submitted (click-1); its one failed episode, click-4, met clicked
	// only. mw-2 failed with no facts (MiniWoB++ pages report none), shop's
	// failure was aborted: neither has a row.
	"failing_facts": `family,kind,fact,failed_episodes,missing,missing_pct
click,sample,submitted,1,1,100
`,
	// click-4 ended on its step-4 fill, mw-2 on its step-3 click.
	"failed_last_actions": `family,kind,action_type,episodes,failed_episodes,pct_of_failed,example
click,sample,fill,1,1,100,"fill(""b2"", ""x"")"
miniwob/click-test,sample,click,1,1,100,"click(""b7"")"
`,
	// rows and duplicates depend on whether ClickHouse merged the two
	// copies already; the test blanks them (see below).
	"event_counts": `table_name,rows,events,duplicates
actions,-,15,-
bad_records,-,2,-
dead_letters,-,1,-
episodes,-,10,-
obs,-,3,-
rewards,-,8,-
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
	"learner_stats": `policy_name,version,published_at,updates,loss,approx_kl,clip_frac,entropy,trained_staleness,max_trained_staleness
pi,1,2026-01-15 10:00:00,10,0.5,0.01,0.25,3,0.5,1
pi,2,2026-01-15 10:02:00,20,0.4,0.02,0.15,2.5,1,2
pi,3,2026-01-15 10:04:00,30,0.3,0.03,0.05,2,1.5,3
`,
	// The policy's curves: at 10:01 the two sampled click episodes (the
	// two demonstrations are left out); at 10:06 click's 1 of 2 and
	// miniwob/click-test's 1 of 2 sampled, and shop's greedy held-out
	// success (its aborted episode left out).
	"learning_curve": `bucket,tier,kind,split,episodes,success_pct
2026-01-15 10:01:00,easy,sample,train,2,100
2026-01-15 10:06:00,easy,sample,train,4,50
2026-01-15 10:06:00,hard,greedy,test,1,100
`,
	// actor-3's three actions at T0+6m are of v3, the newest: staleness 0.
	"staleness": `staleness,actions,pct,cumulative_pct
0,11,73.33,73.33
1,3,20,93.33
2,1,6.67,100
`,
	// By minute: 4 actions of v1 at 10:00:30 (v1 newest: 0); at 10:03 three
	// of v1 (v2 newest: 1) and two of v2 (0); at 10:05 one of v1 (v3
	// newest: 2) and two of v3 (0).
	"staleness_over_time": `bucket,actions,mean_staleness,max_staleness
2026-01-15 10:00:00,4,0,0
2026-01-15 10:03:00,5,0.6,1
2026-01-15 10:05:00,3,0.67,2
2026-01-15 10:06:00,3,0,0
`,
	// The demonstrations (version 0) are a row of their own: click's
	// sampled success stays 3 of 4.
	"success_rate": `family,site,split,tier,kind,policy_version,episodes,successes,aborted,success_pct
click,s1,train,easy,sample,1,4,3,0,75
click,s1,train,easy,demo,0,2,2,0,100
miniwob/click-test,miniwob,train,easy,sample,3,2,1,0,50
shop,s2,test,hard,greedy,2,2,1,1,100
`,
	// builtin sample: click's 4 episodes (13 steps) in 2 minutes; greedy:
	// shop's 2 (11 steps, one aborted) in 1; demo: 2 of 2 steps in 1;
	// miniwob sample: 2 episodes of 1 and 4 steps in 1 minute.
	// miniwob/click-test: a strict success (raw 1, decayed 0.8) and a
	// failure (raw -1).
	"miniwob_scores": `family,kind,episodes,score,strict_pct,raw_positive_pct,decayed
miniwob/click-test,sample,2,0,50,50,0
`,
	"suite_summary": `suite,kind,episodes,aborted_episodes,successes,success_pct,steps,active_minutes,episodes_per_min,steps_per_min
builtin,sample,4,0,3,75,13,2,2,6.5
builtin,greedy,2,1,1,100,11,1,2,11
builtin,demo,2,0,2,100,4,1,2,4
miniwob,sample,2,0,1,50,5,1,2,5
`,
	"throughput": `bucket,topic,events,events_per_s
2026-01-15 10:00:00,actions,4,0.07
2026-01-15 10:00:00,obs,3,0.05
2026-01-15 10:00:00,tasks,2,0.03
2026-01-15 10:00:00,weights,1,0.02
2026-01-15 10:01:00,episodes,4,0.07
2026-01-15 10:01:00,rewards,5,0.08
2026-01-15 10:01:00,telemetry,2,0.03
2026-01-15 10:02:00,dlq,1,0.02
2026-01-15 10:02:00,telemetry,1,0.02
2026-01-15 10:02:00,transitions,2,0.03
2026-01-15 10:02:00,weights,1,0.02
2026-01-15 10:03:00,actions,5,0.08
2026-01-15 10:04:00,weights,1,0.02
2026-01-15 10:05:00,actions,3,0.05
2026-01-15 10:06:00,actions,3,0.05
2026-01-15 10:06:00,episodes,6,0.1
2026-01-15 10:06:00,rewards,3,0.05
`,
	"throughput_by_producer": `producer,topic,events,active_minutes,per_minute_avg,per_minute_peak
joiner-0,episodes,10,2,5,6
actor-1,actions,7,2,3.5,4
actor-1,rewards,5,1,5,5
actor-2,actions,5,2,2.5,3
actor-1,obs,3,1,3,3
actor-3,actions,3,1,3,3
actor-3,rewards,3,1,3,3
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
// real server over the known dataset of run "p.", inserted twice: the
// results must be those of one copy (the views and the raw-table queries
// are duplicate-proof). The same dataset of run "q." and, without its
// demonstrations, of run "r." share the database: filtered by run, each
// query sees its run only (--run).
func TestIntegrationSavedQueriesKnownDataset(t *testing.T) {
	db, conn := analyticstest.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	load := func(items []analyticstest.Item, prefix string) {
		t.Helper()
		bad, err := analyticstest.Load(ctx, conn, db, items)
		if err != nil {
			t.Fatal(err)
		}
		if bad != 2 {
			t.Fatalf("dataset has %d undecodable records, want 2", bad)
		}
		if err := analytics.InsertLag(ctx, conn, db, analyticstest.Lag(prefix)); err != nil {
			t.Fatal(err)
		}
	}
	items := analyticstest.Dataset("p.")
	load(items, "p.")
	load(items, "p.")
	load(analyticstest.Dataset("q."), "q.")
	load(withoutDemos(t, analyticstest.Dataset("r.")), "r.")
	qs, err := analytics.Queries()
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != len(expected) {
		t.Errorf("%d saved queries, %d expectations: every query needs one", len(qs), len(expected))
	}
	p := analytics.Params{Since: analyticstest.T0.Add(-time.Hour), Until: analyticstest.T0.Add(time.Hour), Bucket: time.Minute, Run: "p."}
	run := func(t *testing.T, q analytics.Query, p analytics.Params) string {
		t.Helper()
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
		return got
	}
	for _, q := range qs {
		t.Run(q.Name, func(t *testing.T) {
			want, ok := expected[q.Name]
			if !ok {
				t.Fatalf("no expected result for saved query %s", q.Name)
			}
			if got := run(t, q, p); got != want {
				t.Errorf("saved query %s returned\n%s\nwant\n%s", q.Name, got, want)
			}
			// Run q. holds the same dataset once: the same answer, its
			// topics named with its prefix.
			pq := p
			pq.Run = "q."
			if got, want := run(t, q, pq), strings.ReplaceAll(want, "p.", "q."); got != want {
				t.Errorf("saved query %s --run q. returned\n%s\nwant\n%s", q.Name, got, want)
			}
		})
	}

	// Without a run filter every run counts: p.'s events (twice, once
	// each), q.'s and r.'s (r. is p. less its two demonstration episodes).
	t.Run("all runs", func(t *testing.T) {
		q, err := analytics.LookupQuery("event_counts")
		if err != nil {
			t.Fatal(err)
		}
		all := p
		all.Run = ""
		got := run(t, q, all)
		for _, line := range []string{"actions,-,45,-", "episodes,-,28,-", "bad_records,-,6,-"} {
			if !strings.Contains(got, "\n"+line+"\n") {
				t.Errorf("event_counts over all runs lacks %s:\n%s", line, got)
			}
		}
	})

	// Demonstrations never count as the policy's successes: run r. is run
	// p. without its two successful demonstrations, and every row of every
	// success query that is not a demonstration's own is the same.
	t.Run("demonstrations do not raise success", func(t *testing.T) {
		for _, name := range []string{"learning_curve", "success_rate", "episode_outcomes", "episode_lengths", "suite_summary",
			"failing_facts", "failed_last_actions"} {
			q, err := analytics.LookupQuery(name)
			if err != nil {
				t.Fatal(err)
			}
			pr := p
			pr.Run = "r."
			var want []string
			for _, line := range strings.SplitAfter(expected[name], "\n") {
				if !strings.Contains(line, ",demo,") {
					want = append(want, line)
				}
			}
			if got := run(t, q, pr); got != strings.Join(want, "") {
				t.Errorf("%s without the demonstrations returned\n%s\nwant\n%s", name, got, strings.Join(want, ""))
			}
			if name == "learning_curve" && strings.Contains(expected[name], "demo") {
				t.Errorf("the learning curve shows demonstrations:\n%s", expected[name])
			}
		}
	})

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
			sql := strings.NewReplacer("$__fromTime", at(p.Since), "$__toTime", at(p.Until), "$__interval_s", "60", "${run}", p.Run).Replace(gp.SQL)
			res, err := analytics.Run(ctx, conn, analytics.Query{Name: "grafana " + gp.Query, SQL: sql}, p)
			if err != nil {
				t.Fatalf("%v\n%s", err, sql)
			}
			if want := strings.Count(expected[gp.Query], "\n") - 1; len(res.Rows) != want || want < 1 {
				t.Errorf("panel %q returned %d rows, its saved query %d", gp.Title, len(res.Rows), want)
			}
		})
	}

	// Outside the window nothing is returned, nor for a run that wrote nothing.
	empty := analytics.Params{Since: analyticstest.T0.Add(time.Hour), Until: analyticstest.T0.Add(2 * time.Hour)}
	for _, q := range qs {
		none := p
		none.Run = "nosuchrun."
		res, err := analytics.Run(ctx, conn, q, none)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range res.Rows {
			if q.Name != "event_counts" || row[2] != uint64(0) {
				t.Errorf("%s --run nosuchrun. returned %v", q.Name, row)
			}
		}
	}
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

// withoutDemos is items less the demonstration episodes.
func withoutDemos(t *testing.T, items []analyticstest.Item) []analyticstest.Item {
	t.Helper()
	var out []analyticstest.Item
	for _, it := range items {
		if it.Topic == topics.Episodes {
			ep, err := eventspb.DecodeEpisode(it.Record.Value)
			if err != nil {
				t.Fatal(err)
			}
			if ep.GetPolicyName() == "oracle" {
				continue
			}
		}
		out = append(out, it)
	}
	if len(out) != len(items)-2 {
		t.Fatalf("the dataset has %d demonstration episodes, want 2", len(items)-len(out))
	}
	return out
}
