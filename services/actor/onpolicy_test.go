package actor

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestIntegrationOnPolicyWaitsForVersions is testOnPolicyWaitsForVersions
// on the real broker.
func TestIntegrationOnPolicyWaitsForVersions(t *testing.T) {
	srv := startWebenv(t, "none")
	testOnPolicyWaitsForVersions(t, newKafkaEnv(t, srv.URL()))
}

// TestOnPolicyWaitsForVersions is testOnPolicyWaitsForVersions on franz-go's
// in-process cluster (kfake): the wait is the actor's, not the broker's, so
// it holds without one.
func TestOnPolicyWaitsForVersions(t *testing.T) {
	srv := startWebenv(t, "none")
	testOnPolicyWaitsForVersions(t, newFakeKafkaEnv(t, srv.URL()))
}

// testOnPolicyWaitsForVersions is the actor's half of the classic on-policy
// loop (bench train's sync mode): a stand-in learner publishes version v+1
// a while after it has read the end of every episode of batch v, and no
// episode of the next batch may start before that version is out; every
// batch acts with one version only.
func testOnPolicyWaitsForVersions(t *testing.T, k *kafkaEnv) {
	const executors, batches = 2, 3
	publishWeights(t, k, 1, 7)
	published := map[uint64]time.Time{1: time.Now()}
	var mu sync.Mutex

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The stand-in learner: it reads rewards, and when a batch's episodes
	// have all ended it waits (the training a learner would do) and
	// publishes the next version.
	cl, err := k.factory.NewClient("stand-in-learner", kgo.ConsumeTopics(k.catalog.Name(topics.Rewards)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	learnerDone := make(chan struct{})
	go func() {
		defer close(learnerDone)
		ended, version := 0, uint64(1)
		for ctx.Err() == nil && version <= batches {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
				if w, err := eventspb.DecodeReward(r.Value); err == nil && w.GetDone() {
					ended++
				}
			})
			if ended >= int(version)*executors {
				time.Sleep(1500 * time.Millisecond) // training
				version++
				publishWeights(t, k, version, 7+version)
				mu.Lock()
				published[version] = time.Now()
				mu.Unlock()
			}
		}
	}()

	a := k.startActor(t, WithExecutors(executors), WithBrowsers(1), WithMode(ModeSync), WithOnPolicy(true),
		WithMaxSteps(2), WithFamilies("click-button"))
	ev := &events{}
	k.consume(t, ctx, ev)
	waitUntil(t, 5*time.Minute, "the stand-in learner's last version", func() bool {
		select {
		case <-learnerDone:
			return true
		default:
			return false
		}
	})
	waitUntil(t, 2*time.Minute, "an episode of the last version", func() bool {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		for _, ac := range ev.actions {
			if ac.GetPolicyVersion() == batches+1 {
				return true
			}
		}
		return false
	})
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancel()

	ev.mu.Lock()
	defer ev.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	// Per episode: the versions its actions used and when it began.
	type episode struct {
		versions map[uint64]bool
		start    time.Time
	}
	eps := map[string]*episode{}
	for _, ac := range ev.actions {
		id := ac.GetEnvelope().GetEpisodeId()
		e := eps[id]
		if e == nil {
			e = &episode{versions: map[uint64]bool{}}
			eps[id] = e
		}
		e.versions[ac.GetPolicyVersion()] = true
	}
	for _, o := range ev.obs {
		if e := eps[o.GetEnvelope().GetEpisodeId()]; e != nil {
			at := time.Unix(0, o.GetEnvelope().GetProducedAtUnixNano())
			if e.start.IsZero() || at.Before(e.start) {
				e.start = at
			}
		}
	}
	perVersion := map[uint64]int{}
	for id, e := range eps {
		if len(e.versions) != 1 {
			t.Errorf("episode %s acted with versions %v: a batch acts with one version", id, e.versions)
			continue
		}
		for v := range e.versions {
			perVersion[v]++
			pub, ok := published[v]
			if !ok {
				t.Errorf("episode %s acted with version %d, which was never published", id, v)
				continue
			}
			if e.start.Before(pub) {
				t.Errorf("episode %s of version %d began at %s, %s before the version was published",
					id, v, e.start.Format(time.StampMilli), pub.Sub(e.start))
			}
		}
	}
	for v := uint64(1); v <= batches; v++ {
		if perVersion[v] != executors {
			t.Errorf("version %d acted %d episodes, want one batch of %d", v, perVersion[v], executors)
		}
	}
}

// TestOnPolicyDemonstrationsWaitForNoVersion: in the on-policy loop a
// demonstration acts no policy and the learner never counts it into its
// on-policy batch, so it is no executor's share of a batch: an executor that
// draws one plays it and draws again until it has a policy episode. Here no
// version ever comes after the first, and an odd number of demonstrations
// for 2 executors: every demonstration must still end (12-06: a sync run
// stopped for good after its 48th of 60, waiting for a version after a
// batch of demonstrations only), and then each executor plays exactly one
// policy episode and waits (before, the batch holding the last
// demonstration had one policy episode, and the learner waited 20 s for
// the other).
func TestOnPolicyDemonstrationsWaitForNoVersion(t *testing.T) {
	srv := startWebenv(t, "none")
	k := newFakeKafkaEnv(t, srv.URL())
	publishWeights(t, k, 1, 7)
	const executors, demos = 2, 5
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := map[string]bool{}
	for i := range demos {
		want[k.produceDemo(t, ctx, i, "click-button", int64(i), eventspb.Tier_TIER_EASY, 5)] = true
	}
	a := k.startActor(t, WithExecutors(executors), WithBrowsers(1), WithMode(ModeSync), WithOnPolicy(true), WithMaxSteps(5),
		WithFamilies("click-button"), WithTaskGrace(3*time.Second), WithTaskGroup(k.catalog.Prefix+"actor-demo-sync"))
	rctx, rcancel := context.WithCancel(context.Background())
	defer rcancel()
	ev := &events{}
	k.consume(t, rctx, ev)
	// ended counts the demonstrations (demo) or the policy's episodes
	// that ended; began, the policy's episodes that began.
	ended := func(demo bool) int {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		n := 0
		for _, r := range ev.rewards {
			if want[r.GetEnvelope().GetEpisodeId()] == demo && r.GetDone() {
				n++
			}
		}
		return n
	}
	began := func() int {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		ids := map[string]bool{} // s_0 may be observed more than once before it settles
		for _, o := range ev.obs {
			if id := o.GetEnvelope().GetEpisodeId(); !want[id] {
				ids[id] = true
			}
		}
		return len(ids)
	}
	waitUntil(t, 3*time.Minute, fmt.Sprintf("all %d demonstrations with no new version", demos), func() bool { return ended(true) == demos })
	waitUntil(t, 3*time.Minute, fmt.Sprintf("a policy episode from each of the %d executors", executors), func() bool { return ended(false) == executors })
	if n := began(); n != executors {
		t.Errorf("%d policy episodes began with no new version, want the batch's %d", n, executors)
	}
	if v := a.PolicyVersion(); v != 1 {
		t.Errorf("served version %d, want 1: no version was published", v)
	}
}
