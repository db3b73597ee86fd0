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
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
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
	for _, s := range webenv.Sites {
		if webenv.SiteSplit("click-button", s.Name) == webenv.SplitTrain {
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
	a, err := New(k.cfg, k.factory, k.catalog, WithExecutors(3), WithBrowsers(1), WithMode(ModeSync), WithLogger(testLogger(t)),
		WithTaskGrace(3*time.Second), WithMaxSteps(4), WithFamilies("tick-checkboxes"), WithTaskGroup(group), WithTelemetryWindow(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = a.Stop(context.Background())
		}
	}()
	rctx, rcancel := context.WithCancel(context.Background())
	defer rcancel()
	ev := &events{}
	k.consume(t, rctx, ev)
	waitUntil(t, 5*time.Minute, "10 episodes", func() bool { return a.Stats().Episodes >= 10 })
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	stopped = true
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
