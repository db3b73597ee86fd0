package joiner_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/loadtest"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

type cluster struct {
	cfg     *config.Config
	factory *kafka.Factory
	catalog *topics.Catalog
	admin   *kgo.Client
	fake    *kfake.Cluster
}

// newCluster is the joiner's view of a test cluster (kafkatest): the
// members' config and client factory on it.
func newCluster(kc *kafkatest.Cluster) *cluster {
	cfg := &config.Config{InstanceID: "test"}
	return &cluster{cfg: cfg, factory: kafka.NewFactory(cfg, kc.Seeds, nil), catalog: kc.Catalog, admin: kc.Admin, fake: kc.Fake}
}

func (c *cluster) member(t *testing.T, instance string, opts ...joiner.Option) *joiner.Service {
	t.Helper()
	base := []joiner.Option{joiner.WithInstanceID(instance), joiner.WithMaxBatch(500), joiner.WithLogger(warnLogger(t))}
	s, err := joiner.New(c.cfg, c.factory, c.catalog, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// warnLogger sends a member's warnings to the test's log, which go test
// prints when the test fails: why a session was rebuilt, or stalled.
// Lines after the test's end are dropped (t.Log would panic).
func warnLogger(t *testing.T) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() { w.mu.Lock(); w.done = true; w.mu.Unlock() })
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct {
	mu   sync.Mutex
	t    *testing.T
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (c *cluster) newClient(opts ...kgo.Opt) (*kgo.Client, error) {
	return c.factory.NewClient("test", opts...)
}

func stop(t *testing.T, s *joiner.Service) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestServiceRebalanceExactlyOnceEmbedded runs the service on the
// in-process cluster: one member joins part of the load, a second one takes
// over half the partitions (restoring their state from the changelog), the
// first leaves, and the output still holds every transition exactly once.
func TestServiceRebalanceExactlyOnceEmbedded(t *testing.T) {
	c := newCluster(kafkatest.Fake(t, "unit.", topics.WithPartitions(4)))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	prod, err := c.factory.NewClient("load")
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	// The load holds at half until b owns partitions: otherwise a, alone
	// and fast, could join everything before b's first assignment, and b
	// would have nothing to take over (the test hung so in a CI run).
	load := loadtest.DefaultConfig(6000)
	load.Steps = 4
	bAssigned := make(chan struct{})
	load.Progress = func(sent, total int) {
		if sent >= total/2 {
			select {
			case <-bAssigned:
			case <-ctx.Done():
			}
		}
	}
	type genResult struct {
		exp *loadtest.Expected
		err error
	}
	genDone := make(chan genResult, 1)
	go func() {
		exp, err := loadtest.Generate(ctx, prod, c.catalog, load)
		genDone <- genResult{exp, err}
	}()

	regA := prometheus.NewRegistry()
	a := c.member(t, "a", joiner.WithMetrics(regA))
	waitConsumed(t, a, 1500)
	regB := prometheus.NewRegistry()
	b := c.member(t, "b", joiner.WithMetrics(regB))
	for b.FirstAssigned().IsZero() {
		if ctx.Err() != nil {
			t.Fatal("b was never assigned partitions")
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(bAssigned)
	gen := <-genDone
	if gen.err != nil {
		t.Fatal(gen.err)
	}
	exp := gen.exp
	waitConsumed(t, b, 1) // b owns partitions and restored them
	stop(t, a)
	if _, err := kafka.WaitCaughtUp(ctx, c.newClient, c.catalog.Prefix+"joiner", c.catalog.Inputs()); err != nil {
		t.Fatal(err)
	}
	stop(t, b)

	rep, err := loadtest.Verify(ctx, c.newClient, c.catalog, exp)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("records %d (%d duplicates, %d reordered, %d malformed): %s", exp.Records, exp.Duplicates, exp.Reordered, len(exp.Malformed), rep)
	if !rep.OK() {
		t.Fatalf("joiner output is wrong: %s", rep)
	}
	if len(exp.Malformed) == 0 || exp.Duplicates == 0 || exp.Reordered == 0 {
		t.Fatalf("the load was not spoiled: %+v", exp)
	}
	// b took partitions over in the middle of episodes: it must have
	// restored undecided events from the changelog.
	if n := counter(t, regB, "asyncwebrl_joiner_restored_events_total"); n == 0 {
		t.Fatal("the second member restored no pending event: the test did not exercise a hand-over")
	}
	// A rebalance must not cost an aborted transaction (the session would
	// abort the first one after a revoke; run clears that beforehand).
	for name, reg := range map[string]*prometheus.Registry{"a": regA, "b": regB} {
		if n := counterWith(t, reg, "asyncwebrl_joiner_transactions_total", "aborted"); n != 0 {
			t.Errorf("member %s aborted %v transactions", name, n)
		}
	}
	ca, cb := a.Committed(), b.Committed()
	if ca.Consumed == 0 || cb.Consumed == 0 || ca.Consumed+cb.Consumed < int64(exp.Records) {
		t.Fatalf("members consumed %d and %d of %d records", ca.Consumed, cb.Consumed, exp.Records)
	}
}

func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			var sum float64
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
			return sum
		}
	}
	t.Fatalf("metric %s not registered", name)
	return 0
}

func waitConsumed(t *testing.T, s *joiner.Service, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for s.Committed().Consumed < int64(n) {
		if time.Now().After(deadline) {
			t.Fatalf("the member consumed %d records in 2 minutes, want %d", s.Committed().Consumed, n)
		}
		if err := s.Healthy(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStartRefusesTopicsNotCoPartitioned: an input topic with more
// partitions than the others breaks the co-partitioning by episode id; the
// member refuses to start instead of joining wrongly.
func TestStartRefusesTopicsNotCoPartitioned(t *testing.T) {
	c := newCluster(kafkatest.Fake(t, "guard.", topics.WithPartitions(2)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := kadm.NewClient(c.admin).UpdatePartitions(ctx, 3, c.catalog.Name(topics.Rewards)); err != nil {
		t.Fatal(err)
	}
	s, err := joiner.New(c.cfg, c.factory, c.catalog)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err == nil || !strings.Contains(err.Error(), "co-partitioned") {
		t.Fatalf("Start with 3 reward partitions and 2 obs partitions: %v", err)
	}
}

// TestServiceAbortRollsBackStateEmbedded: when a transaction aborts (here
// the broker refuses one offset commit), the offsets go back to the last
// commit and so must the join state: the member rebuilds its machines from
// the changelog and joins the batch again, without duplicates.
func TestServiceAbortRollsBackStateEmbedded(t *testing.T) {
	c := newCluster(kafkatest.Fake(t, "abort.", topics.WithPartitions(3)))
	fake := c.fake
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prod, err := c.factory.NewClient("load")
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	load := loadtest.DefaultConfig(4000)
	load.Steps = 4
	exp, err := loadtest.Generate(ctx, prod, c.catalog, load)
	if err != nil {
		t.Fatal(err)
	}

	// Refuse the third transactional offset commit.
	var commits atomic.Int32
	fake.ControlKey(int16(kmsg.TxnOffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		if commits.Add(1) != 3 {
			return nil, nil, false
		}
		r := req.(*kmsg.TxnOffsetCommitRequest)
		resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewTxnOffsetCommitResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.ConcurrentTransactions.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})

	reg := prometheus.NewRegistry()
	m := c.member(t, "solo", joiner.WithMetrics(reg))
	if _, err := kafka.WaitCaughtUp(ctx, c.newClient, c.catalog.Prefix+"joiner", c.catalog.Inputs()); err != nil {
		t.Fatal(err)
	}
	stop(t, m)
	if n := counter(t, reg, "asyncwebrl_joiner_transactions_total"); n < 4 {
		t.Fatalf("only %v transactions", n)
	}
	if n := counterWith(t, reg, "asyncwebrl_joiner_transactions_total", "aborted"); n != 1 {
		t.Fatalf("%v aborted transactions, want the one refused", n)
	}
	if n := counter(t, reg, "asyncwebrl_joiner_partition_restores_total"); n <= 3 {
		t.Fatalf("%v partition restores: the abort did not rebuild state", n)
	}
	rep, err := loadtest.Verify(ctx, c.newClient, c.catalog, exp)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("joiner output after an abort is wrong: %s", rep)
	}
}

func counterWith(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestServiceSessionRebuiltEmbedded: a transaction whose end fails for good
// (the broker answers EndTxn with an error franz-go does not retry, as after
// a broker restart) costs the member its Kafka session, not its life: it
// builds a new session, restores from the changelog and goes on, and
// nothing is lost or duplicated.
func TestServiceSessionRebuiltEmbedded(t *testing.T) {
	c := newCluster(kafkatest.Fake(t, "rebuild.", topics.WithPartitions(3)))
	fake := c.fake
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	exp := generate(ctx, t, c, 4000)

	// Fail the third EndTxn.
	var ends atomic.Int32
	fake.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		if ends.Add(1) != 3 {
			return nil, nil, false
		}
		resp := req.(*kmsg.EndTxnRequest).ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = kerr.InvalidTxnState.Code
		return resp, nil, true
	})

	reg := prometheus.NewRegistry()
	m := c.member(t, "solo", joiner.WithMetrics(reg))
	if _, err := kafka.WaitCaughtUp(ctx, c.newClient, c.catalog.Prefix+"joiner", c.catalog.Inputs()); err != nil {
		t.Fatal(err)
	}
	if err := m.Healthy(ctx); err != nil {
		t.Fatalf("the member is not healthy after its session came back: %v", err)
	}
	stop(t, m)
	if n := counter(t, reg, "asyncwebrl_joiner_session_rebuilds_total"); n != 1 {
		t.Fatalf("%v session rebuilds, want 1 (the failed end)", n)
	}
	verify(ctx, t, c, exp)
}

// TestServiceStallWatchdogEmbedded: a session that fetches nothing while
// its input waits (here the broker answers every fetch empty for a while)
// is ended by the stall watchdog and built anew.
func TestServiceStallWatchdogEmbedded(t *testing.T) {
	c := newCluster(kafkatest.Fake(t, "stall.", topics.WithPartitions(3)))
	fake := c.fake
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	exp := generate(ctx, t, c, 4000)

	// Every fetch is answered empty (the load is already written) until
	// the watchdog has ended the session, or for 60 s at most.
	var starve atomic.Bool
	starve.Store(true)
	reg := prometheus.NewRegistry()
	fake.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		if !starve.Load() {
			return nil, nil, false
		}
		resp := req.(*kmsg.FetchRequest).ResponseKind().(*kmsg.FetchResponse)
		time.Sleep(50 * time.Millisecond)
		return resp, nil, true
	})
	m := c.member(t, "solo", joiner.WithMetrics(reg), joiner.WithStallTimeout(time.Second))
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if counter(t, reg, "asyncwebrl_joiner_session_rebuilds_total") >= 1 {
			break
		}
	}
	starve.Store(false)
	if _, err := kafka.WaitCaughtUp(ctx, c.newClient, c.catalog.Prefix+"joiner", c.catalog.Inputs()); err != nil {
		t.Fatal(err)
	}
	stop(t, m)
	if n := counter(t, reg, "asyncwebrl_joiner_session_rebuilds_total"); n < 1 {
		t.Fatal("the starved session was never rebuilt")
	}
	verify(ctx, t, c, exp)
}

func generate(ctx context.Context, t *testing.T, c *cluster, records int) *loadtest.Expected {
	t.Helper()
	prod, err := c.factory.NewClient("load")
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	load := loadtest.DefaultConfig(records)
	load.Steps = 4
	exp, err := loadtest.Generate(ctx, prod, c.catalog, load)
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

func verify(ctx context.Context, t *testing.T, c *cluster, exp *loadtest.Expected) {
	t.Helper()
	rep, err := loadtest.Verify(ctx, c.newClient, c.catalog, exp)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("joiner output across a rebuilt session is wrong: %s", rep)
	}
}
