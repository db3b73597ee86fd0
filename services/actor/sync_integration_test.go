package actor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestIntegrationSyncModeAndTasksTopic runs the lock-step baseline on
// assignments from the tasks topic: the assignments run first, as their
// pre-assigned episodes and within their step budget, the local generator
// takes over when the topic is quiet, rounds batch every executor's
// inference, waiting at the barrier is idle time, and the consumed
// assignments are committed for the group.
func TestIntegrationSyncModeAndTasksTopic(t *testing.T) {
	srv := startWebenv(t, "none")
	k := newKafkaEnv(t, srv.URL())
	site := ""
	for _, s := range catalog.Sites {
		if catalog.SiteSplit("click-button", s.Name) == catalog.SplitTrain {
			site = s.Name
			break
		}
	}
	const assigned = 3
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range assigned {
		env := eventspb.NewEnvelope("scheduler")
		env.EpisodeId = fmt.Sprintf("assigned-%d", i)
		task := &eventspb.Task{Envelope: env, TaskId: fmt.Sprintf("click-button/%s/seed-%d", site, 100+i), Family: "click-button",
			Site: site, Seed: int64(100 + i), GroupId: "g1", GroupSize: assigned, MaxSteps: 2}
		b, err := eventspb.Marshal(task)
		if err != nil {
			t.Fatal(err)
		}
		if err := k.admin.ProduceSync(ctx, &kgo.Record{Topic: k.catalog.Name(topics.Tasks), Key: []byte(task.GetTaskId()), Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	group := k.catalog.Prefix + "actor-sync-test"
	a := k.startActor(t, WithExecutors(3), WithBrowsers(1), WithMode(ModeSync),
		WithTaskGrace(3*time.Second), WithMaxSteps(4), WithFamilies("tick-checkboxes"), WithTaskGroup(group), WithTelemetryWindow(time.Second))
	rctx, rcancel := context.WithCancel(context.Background())
	defer rcancel()
	ev := &events{}
	k.consume(t, rctx, ev)
	waitUntil(t, 5*time.Minute, "10 episodes", func() bool { return a.Stats().Episodes >= 10 })
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := a.Stats()
	waitUntil(t, time.Minute, "every event read back", func() bool {
		o, ac, r, te := ev.counts()
		return uint64(o+ac+r+te) >= st.Produced
	})
	rcancel()
	c := checkEvents(t, ev, st, "")

	ev.mu.Lock()
	defer ev.mu.Unlock()
	runs := map[string]bool{}
	local := 0
	for _, o := range c.obsByID {
		ep := o.GetEnvelope().GetEpisodeId()
		switch o.GetTask().GetFamily() {
		case "click-button":
			if o.GetTask().GetGroupId() != "g1" || o.GetTask().GetTier() != eventspb.Tier_TIER_EASY {
				t.Fatalf("assignment ran with task ref %v", o.GetTask())
			}
			runs[ep] = true
		case "tick-checkboxes":
			local++
		default:
			t.Fatalf("unexpected family %q", o.GetTask().GetFamily())
		}
	}
	for i := range assigned {
		if !runs[fmt.Sprintf("assigned-%d", i)] {
			t.Fatalf("assignment %d did not run as its episode (ran: %v)", i, runs)
		}
	}
	if len(runs) != assigned || local == 0 {
		t.Fatalf("%d assigned episodes and %d local obs, want %d and some", len(runs), local, assigned)
	}
	maxBatch := uint32(0)
	for _, x := range ev.actions {
		if strings.HasPrefix(x.GetEnvelope().GetEpisodeId(), "assigned-") && x.GetEnvelope().GetStep() >= 2 {
			t.Fatalf("assignment acted at step %d beyond its budget of 2", x.GetEnvelope().GetStep())
		}
		maxBatch = max(maxBatch, x.GetBatchSize())
	}
	if maxBatch < 2 {
		t.Fatalf("largest inference batch %d: sync rounds did not batch", maxBatch)
	}
	var idle uint64
	for _, m := range ev.tel {
		if m.GetMode() != "sync" {
			t.Fatalf("telemetry mode %q", m.GetMode())
		}
		idle += m.GetIdleUs()
	}
	if idle == 0 {
		t.Fatal("no idle time at the sync barriers")
	}
	checkEpisodeBatches(t, ev)
	// The three assignments are committed for the group.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	offs, err := kadm.NewClient(k.admin).FetchOffsets(ctx2, group)
	if err != nil {
		t.Fatal(err)
	}
	var committed int64
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == k.catalog.Name(topics.Tasks) {
			committed += o.At
		}
	})
	if committed != assigned {
		t.Fatalf("%d task offsets committed, want %d", committed, assigned)
	}
	t.Logf("%d assigned + %d local-task obs, max batch %d, stats %+v", len(runs), local, maxBatch, st)
}

// checkEpisodeBatches checks the strict baseline's batches of episodes
// (ev locked): episodes start together and the next batch starts after
// the last episode of the batch ended, so "their lifetimes overlap" is an
// equivalence (same batch). Where an executor restarts on its own (the
// sync-step baseline, async), a long episode overlaps two episodes of
// another executor that do not overlap each other. A lifetime runs from
// the step-0 observation to the last event; episodes aborted before it
// are left out.
func checkEpisodeBatches(t *testing.T, ev *events) {
	t.Helper()
	type span struct{ from, to int64 }
	spans := map[string]*span{}
	note := func(env *eventspb.Envelope) {
		if sp := spans[env.GetEpisodeId()]; sp != nil {
			sp.from, sp.to = min(sp.from, env.GetProducedAtUnixNano()), max(sp.to, env.GetProducedAtUnixNano())
		}
	}
	for _, o := range ev.obs {
		if o.GetEnvelope().GetStep() == 0 {
			at := o.GetEnvelope().GetProducedAtUnixNano()
			spans[o.GetEnvelope().GetEpisodeId()] = &span{at, at}
		}
	}
	for _, o := range ev.obs {
		note(o.GetEnvelope())
	}
	for _, a := range ev.actions {
		note(a.GetEnvelope())
	}
	for _, r := range ev.rewards {
		note(r.GetEnvelope())
	}
	ids := make([]string, 0, len(spans))
	for id := range spans {
		ids = append(ids, id)
	}
	overlap := func(a, b string) bool {
		x, y := spans[a], spans[b]
		return x.from <= y.to && y.from <= x.to
	}
	batches := 0
	for i, a := range ids {
		for j, b := range ids {
			if j <= i || !overlap(a, b) {
				continue
			}
			for _, c := range ids {
				if c != a && c != b && overlap(a, c) && !overlap(b, c) {
					t.Fatalf("episode %s overlaps %s and %s, which do not overlap each other: not batches of episodes", a, b, c)
				}
			}
		}
	}
	for i, a := range ids {
		first := true
		for _, b := range ids[:i] {
			if overlap(a, b) {
				first = false
				break
			}
		}
		if first {
			batches++
		}
	}
	if batches < 2 {
		t.Fatalf("%d batches of episodes over %d episodes, want 2 or more", batches, len(ids))
	}
	t.Logf("%d episodes in %d batches", len(ids), batches)
}
