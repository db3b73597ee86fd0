package actor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// testLogger logs to the test output with -v and ASYNCWEBRL_TEST_LOG=1,
// else nowhere.
func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("ASYNCWEBRL_TEST_LOG") == "1" {
		return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// startWebenv serves the train split with a latency profile.
func startWebenv(t testing.TB, profile string) *webenv.Server {
	t.Helper()
	p, err := webenv.ParseProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := webenv.New(webenv.WithProfile(p), webenv.WithLatencySeed(1), webenv.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	return srv
}

// kafkaEnv is the real broker with a topic catalog of this test's own.
type kafkaEnv struct {
	cfg     *config.Config
	factory *kafka.Factory
	catalog *topics.Catalog
	admin   *kgo.Client
}

func newKafkaEnv(t *testing.T, webenvURL string) *kafkaEnv {
	t.Helper()
	kc := kafkatest.Real(t, "actor", topics.WithPartitions(3))
	cfg := &config.Config{InstanceID: "actor-test", WebenvURL: webenvURL}
	return &kafkaEnv{cfg: cfg, factory: kafka.NewFactory(cfg, kc.Seeds, nil), catalog: kc.Catalog, admin: kc.Admin}
}

// newFakeKafkaEnv is newKafkaEnv on franz-go's in-process cluster (kfake),
// for unit tests of what the actor does rather than what the broker does.
func newFakeKafkaEnv(t *testing.T, webenvURL string) *kafkaEnv {
	t.Helper()
	kc := kafkatest.Fake(t, "actor.", topics.WithPartitions(3))
	cfg := &config.Config{InstanceID: "actor-test", WebenvURL: webenvURL}
	return &kafkaEnv{cfg: cfg, factory: kafka.NewFactory(cfg, kc.Seeds, nil), catalog: kc.Catalog, admin: kc.Admin}
}

// startActor builds an actor on k with opts (logging to the test) and
// starts it; it is stopped when the test ends (Stop is idempotent, so a
// test may stop it first).
func (k *kafkaEnv) startActor(t *testing.T, opts ...Option) *Service {
	t.Helper()
	a, err := New(k.cfg, k.factory, k.catalog, append([]Option{WithLogger(testLogger(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	return a
}

// events is everything the actor published, decoded.
type events struct {
	mu      sync.Mutex
	obs     []*eventspb.Observation
	actions []*eventspb.Action
	rewards []*eventspb.Reward
	tel     []*eventspb.Telemetry
	dlq     []*eventspb.DeadLetter
	bad     []error
}

func (e *events) counts() (obs, actions, rewards, tel int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.obs), len(e.actions), len(e.rewards), len(e.tel)
}

// consume reads the actor's output topics from the start into ev until ctx
// ends.
func (k *kafkaEnv) consume(t *testing.T, ctx context.Context, ev *events) {
	t.Helper()
	names := map[string]string{}
	for _, n := range []string{topics.Obs, topics.Actions, topics.Rewards, topics.Telemetry, topics.DLQ} {
		names[k.catalog.Name(n)] = n
	}
	var list []string
	for n := range names {
		list = append(list, n)
	}
	cl, err := k.factory.NewClient("reader", kgo.ConsumeTopics(list...), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer cl.Close()
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) {
				ev.mu.Lock()
				defer ev.mu.Unlock()
				var err error
				switch names[r.Topic] {
				case topics.Obs:
					var o *eventspb.Observation
					if o, err = eventspb.DecodeObservation(r.Value); err == nil {
						ev.obs = append(ev.obs, o)
						if string(r.Key) != o.GetEnvelope().GetEpisodeId() {
							ev.bad = append(ev.bad, errKey(r))
						}
					}
				case topics.Actions:
					var a *eventspb.Action
					if a, err = eventspb.DecodeAction(r.Value); err == nil {
						ev.actions = append(ev.actions, a)
						if string(r.Key) != a.GetEnvelope().GetEpisodeId() {
							ev.bad = append(ev.bad, errKey(r))
						}
					}
				case topics.Rewards:
					var w *eventspb.Reward
					if w, err = eventspb.DecodeReward(r.Value); err == nil {
						ev.rewards = append(ev.rewards, w)
						if string(r.Key) != w.GetEnvelope().GetEpisodeId() {
							ev.bad = append(ev.bad, errKey(r))
						}
					}
				case topics.Telemetry:
					var m *eventspb.Telemetry
					if m, err = eventspb.DecodeTelemetry(r.Value); err == nil {
						ev.tel = append(ev.tel, m)
					}
				case topics.DLQ:
					var d *eventspb.DeadLetter
					if d, err = eventspb.DecodeDeadLetter(r.Value); err == nil {
						ev.dlq = append(ev.dlq, d)
					}
				}
				if err != nil {
					ev.bad = append(ev.bad, kafka.NewRecordError(r, err))
				}
			})
		}
	}()
}

func errKey(r *kgo.Record) error {
	return kafka.NewRecordError(r, errBadKey)
}

var errBadKey = &keyError{}

type keyError struct{}

func (*keyError) Error() string { return "record key is not the event's episode id" }

// waitUntil polls cond every 200ms until it holds; it fails the test after
// limit (a guard against a hang, not a timing assertion).
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s after %s", what, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// produceDemo puts on the tasks topic a demonstration of family's seed,
// episode "demo-<i>", and returns that episode id.
func (k *kafkaEnv) produceDemo(t *testing.T, ctx context.Context, i int, family string, seed int64, tier eventspb.Tier, maxSteps uint32) string {
	t.Helper()
	env := eventspb.NewEnvelope("scheduler")
	env.EpisodeId = fmt.Sprintf("demo-%d", i)
	task := &eventspb.Task{Envelope: env, TaskId: fmt.Sprintf("%s//seed-%d", family, seed), Family: family, Seed: seed,
		Tier: tier, Split: eventspb.Split_SPLIT_TRAIN, MaxSteps: maxSteps, Demo: true, PolicyName: DemoPolicyName}
	b, err := eventspb.Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.admin.ProduceSync(ctx, &kgo.Record{Topic: k.catalog.Name(topics.Tasks), Key: []byte(task.GetTaskId()), Value: b}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return env.EpisodeId
}
