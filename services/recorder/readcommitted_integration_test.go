package recorder_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/recorder"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// txnTables are the transactional topics (the joiner writes them in
// transactions) and their ClickHouse tables.
var txnTables = map[string]string{topics.Transitions: "transitions", topics.Episodes: "episodes", topics.DLQ: "dead_letters"}

// txnEvent builds a valid event of a transactional topic and returns its id
// and bytes.
func txnEvent(t *testing.T, topic string, i int) (string, []byte) {
	t.Helper()
	env := eventspb.NewEnvelope("joiner-test")
	env.EpisodeId = fmt.Sprintf("ep-%d", i)
	var m proto.Message
	switch topic {
	case topics.Transitions:
		obs := &eventspb.Observation{Envelope: &eventspb.Envelope{EventId: fmt.Sprintf("obs-%d", i), SchemaVersion: 1}}
		act := &eventspb.Action{Envelope: &eventspb.Envelope{EventId: fmt.Sprintf("act-%d", i), SchemaVersion: 1},
			Type: eventspb.ActionType_ACTION_TYPE_CLICK}
		m = &eventspb.Transition{Envelope: env, EpisodeId: env.EpisodeId, Obs: obs, Action: act, Done: true,
			PolicyVersion: 1, PolicyName: "pi", Tier: eventspb.Tier_TIER_EASY, Family: "click", Site: "s1"}
	case topics.Episodes:
		m = &eventspb.Episode{Envelope: env, TaskId: "click/seed-1", EpisodeId: env.EpisodeId, Family: "click", Site: "s1",
			Tier: eventspb.Tier_TIER_EASY, Split: eventspb.Split_SPLIT_TRAIN, Length: 2, Success: true, PolicyName: "pi"}
	case topics.DLQ:
		m = &eventspb.DeadLetter{Envelope: env, SourceTopic: "actions", SourceOffset: int64(i), Payload: []byte("x"),
			Reason: "join timeout", ReasonCode: eventspb.ReasonCode_REASON_CODE_JOIN_TIMEOUT, Component: "joiner",
			MessageType: "asyncwebrl.v1.Action"}
	}
	b, err := eventspb.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return env.GetEventId(), b
}

// TestIntegrationRecorderSkipsAbortedTransactions writes the joiner's
// transactional topics as the joiner does, with transactions that abort
// before, between and after committed ones, and runs the recorder until it
// has drained: ClickHouse holds exactly the committed events and none of the
// aborted ones. Read uncommitted (the recorder before issue #15), every
// aborted event was stored too.
func TestIntegrationRecorderSkipsAbortedTransactions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f := newFixture(t, ctx)
	txn, err := kgo.NewClient(kgo.SeedBrokers(f.seeds...), kgo.TransactionalID(f.group+".txn"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()

	committed := map[string]map[string]bool{} // table -> event ids
	aborted := map[string]map[string]bool{}
	for _, table := range txnTables {
		committed[table], aborted[table] = map[string]bool{}, map[string]bool{}
	}
	n := 0
	// transaction writes five events to each transactional topic, all
	// under one key so that each topic's events share a partition and
	// the recorder meets them in this order.
	transaction := func(commit bool) {
		t.Helper()
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for topic, table := range txnTables {
			for range 5 {
				n++
				id, b := txnEvent(t, topic, n)
				recs = append(recs, &kgo.Record{Topic: f.catalog.Name(topic), Key: []byte("ep"), Value: b})
				if commit {
					committed[table][id] = true
				} else {
					aborted[table][id] = true
				}
			}
		}
		if err := txn.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	transaction(false)
	transaction(true)
	transaction(false)
	transaction(false)
	transaction(true)
	// Last an aborted one: the recorder's committed offsets stop at the
	// commit marker before it, and Drain must count that as caught up.
	transaction(false)

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rec, err := recorder.New(f.catalog, analyticstest.Config(t, f.db), f.newClient, recorder.WithGroup(f.group),
		recorder.WithLogger(log), recorder.WithLinger(100*time.Millisecond), recorder.WithLagInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rec.Stop(context.Background()) }()

	admin := analyticstest.Open(t)
	ids := func(table string) map[string]bool {
		rows, err := admin.Query(ctx, fmt.Sprintf("SELECT DISTINCT event_id FROM %s.%s", f.db, table))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]bool{}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			out[id] = true
		}
		return out
	}
	// Drain returns once the group's offsets reach the ends: everything
	// committed is stored by then.
	dctx, dcancel := context.WithTimeout(ctx, time.Minute)
	defer dcancel()
	t0 := time.Now()
	if err := rec.Drain(dctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("drained in %s", time.Since(t0).Round(time.Millisecond))
	got := map[string]map[string]bool{}
	for _, table := range txnTables {
		got[table] = ids(table)
	}
	for _, table := range slices.Sorted(maps.Values(txnTables)) {
		var stray, missing []string
		for id := range got[table] {
			if aborted[table][id] {
				stray = append(stray, id)
			} else if !committed[table][id] {
				t.Errorf("%s holds %s, an event this test never wrote", table, id)
			}
		}
		for id := range committed[table] {
			if !got[table][id] {
				missing = append(missing, id)
			}
		}
		if len(stray) > 0 {
			t.Errorf("%s holds %d events of aborted transactions (of %d aborted): %v", table, len(stray), len(aborted[table]), stray)
		}
		if len(missing) > 0 {
			t.Errorf("%s lacks %d of the %d committed events: %v", table, len(missing), len(committed[table]), missing)
		}
		t.Logf("%s: %d events stored, %d committed, %d aborted", table, len(got[table]), len(committed[table]), len(aborted[table]))
	}
}
