package learner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/weightstopic"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestIntegrationLearnerStandbyTakesOver runs learners of one policy as
// processes of the real binary, each with a run directory (checkpoint) of
// its own, on the real broker. While the leader trains, a standby waits
// and publishes nothing. The leader is killed with kill -9: the standby
// takes over and publishes the next version. A third learner stands by; the
// new leader is paused (SIGSTOP) until its lease times out and the third
// takes over, then resumed: that zombie stops with an error instead of
// publishing. Across both takeovers every version's parent is the version
// before it: no fork, no repeat, no gap.
func TestIntegrationLearnerStandbyTakesOver(t *testing.T) {
	kc := kafkatest.Real(t, "ls", topics.WithPartitions(2))
	seeds, prefix, cat := kc.Seeds, kc.Catalog.Prefix, kc.Catalog
	admin := kc.Client(t, kgo.ProducerBatchMaxBytes(16<<20))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := testenv.Binary(t, dir)
	trTopic, wTopic := cat.Name(topics.Transitions), cat.Name(topics.Weights)
	produce := func(seed uint64) {
		t.Helper()
		for _, v := range syntheticTransitions(t, 300, seed) {
			admin.Produce(ctx, &kgo.Record{Topic: trTopic, Key: []byte(fmt.Sprint(seed)), Value: v}, nil)
		}
		if err := admin.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	start := func(name string) *testenv.Process {
		t.Helper()
		runDir := t.TempDir() // a machine of its own: no shared checkpoint
		return testenv.Start(t, bin, dir, name, "-target=learner", "-brokers="+strings.Join(seeds, ","), "-topic-prefix="+prefix,
			"-instance-id="+name, "-admin-addr=127.0.0.1:0", "-run-dir="+runDir, "-curriculum=false",
			"-batch-size=16", "-publish-every=3", "-stop-timeout=60s")
	}
	// waitFor polls the committed versions until one published by producer
	// arrives, failing if a process in live ends.
	waitFor := func(producer string, live ...*testenv.Process) []*eventspb.Weights {
		t.Helper()
		for {
			ws := publishedVersions(ctx, t, seeds, wTopic)
			for _, w := range ws {
				if w.GetEnvelope().GetProducer() == producer {
					return ws
				}
			}
			for _, p := range live {
				select {
				case <-p.Done:
					t.Fatalf("learner exited: %v", p.Err)
				default:
				}
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	waitLog := func(p *testenv.Process, s string) {
		t.Helper()
		for !p.LogContains(t, s) {
			select {
			case <-p.Done:
				t.Fatalf("learner exited before logging %q: %v", s, p.Err)
			case <-ctx.Done():
				t.Fatalf("no %q in %s: %v", s, p.Log, ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
	}

	produce(1)
	a := start("learner-a")
	waitLog(a, `msg="learner running"`)
	b := start("learner-b")
	waitLog(b, "learner standing by")
	waitFor("learner-a", a, b)

	// kill -9 of the leader.
	if err := a.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-a.Done
	before := publishedVersions(ctx, t, seeds, wTopic)
	for _, w := range before {
		if p := w.GetEnvelope().GetProducer(); p != "learner-a" {
			t.Fatalf("version %d published by %s while learner-a led: a standby published", w.GetVersion(), p)
		}
	}
	lastA := before[len(before)-1].GetVersion()
	produce(2)
	waitLog(b, "learner took over")
	tookOver := time.Since(killed)
	afterB := waitFor("learner-b", b)
	var firstB *eventspb.Weights
	for _, w := range afterB {
		if w.GetEnvelope().GetProducer() == "learner-b" {
			firstB = w
			break
		}
	}
	t.Logf("learner-a killed after version %d; learner-b led %s after the kill and published version %d (parent %d) %s after it",
		lastA, tookOver.Round(time.Millisecond), firstB.GetVersion(), firstB.GetParentVersion(), time.Since(killed).Round(time.Millisecond))
	if firstB.GetVersion() != lastA+1 || firstB.GetParentVersion() != lastA {
		t.Errorf("the standby's first version is %d (parent %d); want %d (parent %d)", firstB.GetVersion(), firstB.GetParentVersion(), lastA+1, lastA)
	}
	if !b.LogContains(t, `from="weights topic"`) {
		t.Errorf("the standby did not resume from the weights topic")
	}

	// A zombie: the leader pauses past its lease, a standby takes over,
	// and the paused one wakes up.
	c := start("learner-c")
	waitLog(c, "learner standing by")
	if err := b.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	produce(3)
	waitLog(c, "learner took over")
	waitFor("learner-c", c)
	t.Logf("learner-b paused; learner-c led %s later", time.Since(paused).Round(time.Millisecond))
	if err := b.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Done:
	case <-ctx.Done():
		t.Fatalf("the zombie learner-b did not stop: %v", ctx.Err())
	}
	if b.Err == nil {
		t.Errorf("the zombie learner-b exited with status 0; want a failure")
	}
	zombie := b.Lines(t, "lost its lease", "learner fenced")
	if len(zombie) == 0 {
		t.Errorf("the zombie learner-b did not say it lost its lease or was fenced")
	}
	t.Logf("zombie learner-b: %v; %s", b.Err, strings.Join(zombie, " | "))

	if err := c.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-c.Done
	if c.Err != nil {
		t.Fatalf("learner-c did not stop cleanly on SIGTERM: %v", c.Err)
	}
	all := publishedVersions(ctx, t, seeds, wTopic)
	var seq []string
	for i, w := range all {
		seq = append(seq, fmt.Sprintf("%d:%s", w.GetVersion(), strings.TrimPrefix(w.GetEnvelope().GetProducer(), "learner-")))
		if w.GetVersion() != uint64(i+1) || w.GetParentVersion() != uint64(i) {
			t.Errorf("record %d: version %d parent %d, want %d and %d", i, w.GetVersion(), w.GetParentVersion(), i+1, i)
		}
	}
	t.Logf("versions:producer: %s", strings.Join(seq, " "))
	for _, w := range all {
		if w.GetEnvelope().GetProducer() == "learner-b" && w.GetEnvelope().GetProducedAtUnixNano() > paused.UnixNano() {
			t.Errorf("version %d published by the zombie learner-b after it was paused", w.GetVersion())
		}
	}
}

// TestIntegrationLearnerFencedPublishRejected: once a newer learner has
// claimed the policy's weights producer, the old one's publish fails with
// errFenced, whether it starts a new transaction or had one open, and
// read-committed readers (actors, a resuming learner) never see what it
// wrote.
func TestIntegrationLearnerFencedPublishRejected(t *testing.T) {
	kc := kafkatest.Real(t, "lf")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fx := newWeightsFixture(ctx, t, kc, "p")
	wTopic, record, claim := fx.topic, fx.record, fx.claim
	f, log := fx.f, fx.log

	a := claim("a")
	if err := a.publish(ctx, record(1, "a")); err != nil {
		t.Fatalf("leader a: %v", err)
	}
	b := claim("b") // b takes over; a does not know
	err := a.publish(ctx, record(2, "a"))
	t.Logf("a's publish after b's claim: %v", err)
	if !errors.Is(err, errFenced) {
		t.Fatalf("a's publish after b's claim: %v; want errFenced", err)
	}
	if err := b.publish(ctx, record(2, "b")); err != nil {
		t.Fatalf("new leader b: %v", err)
	}

	// b is fenced with a transaction open: its record is in the log, and
	// its commit is refused.
	if err := b.cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := b.cl.ProduceSync(ctx, record(3, "b")).FirstErr(); err != nil {
		t.Fatalf("b's produce before c's claim: %v", err)
	}
	c := claim("c")
	err = b.cl.EndTransaction(ctx, kgo.TryCommit)
	t.Logf("b's commit after c's claim: %v", err)
	if !kafka.Fenced(err) {
		t.Fatalf("b's commit after c's claim: %v; want a fencing error", err)
	}
	if err := b.publish(ctx, record(3, "b")); !errors.Is(err, errFenced) {
		t.Fatalf("b's next publish: %v; want errFenced", err)
	}
	if err := c.publish(ctx, record(3, "c")); err != nil {
		t.Fatalf("new leader c: %v", err)
	}

	committed := readWeights(ctx, t, kc.Seeds, wTopic, kgo.ReadCommitted())
	var got []string
	for _, w := range committed {
		got = append(got, fmt.Sprintf("%d:%s", w.GetVersion(), w.GetEnvelope().GetProducer()))
	}
	if want := "1:a 2:b 3:c"; strings.Join(got, " ") != want {
		t.Errorf("read committed: %s; want %s", strings.Join(got, " "), want)
	}
	// The aborted record is in the log: only the isolation level hides it.
	var raw []string
	for _, w := range readWeights(ctx, t, kc.Seeds, wTopic, kgo.ReadUncommitted()) {
		raw = append(raw, fmt.Sprintf("%d:%s", w.GetVersion(), w.GetEnvelope().GetProducer()))
	}
	t.Logf("read committed: %v; read uncommitted: %v", got, raw)
	if !strings.Contains(strings.Join(raw, " "), "3:b") {
		t.Errorf("read uncommitted: %v; want the fenced transaction's 3:b in the log", raw)
	}
	// What a resuming learner or an actor takes as the newest version.
	newClient := func(opts ...kgo.Opt) (*kgo.Client, error) { return f.NewClient("latest", opts...) }
	latest, err := weightstopic.Latest(ctx, newClient, wTopic, "p", log, nil)
	if err != nil {
		t.Fatal(err)
	}
	if latest.GetVersion() != 3 || latest.GetEnvelope().GetProducer() != "c" {
		t.Errorf("newest version read: %d by %s; want 3 by c", latest.GetVersion(), latest.GetEnvelope().GetProducer())
	}
}

// TestIntegrationLearnerZombieLeavesLeaderTxn: a fenced learner that wakes
// up while the new leader has a transaction open (the zombie of
// TestIntegrationLearnerStandbyTakesOver, paused past its lease) fails its
// publishes with errFenced and leaves that transaction alone: the leader's
// commit goes through. The zombie is paused either between two publishes
// or inside one, with its own transaction open.
func TestIntegrationLearnerZombieLeavesLeaderTxn(t *testing.T) {
	kc := kafkatest.Real(t, "lzt")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, midPublish := range []bool{false, true} {
		policy := fmt.Sprintf("mid-publish-%t", midPublish)
		fx := newWeightsFixture(ctx, t, kc, policy)
		wTopic, record, claim := fx.topic, fx.record, fx.claim

		zombie := claim("zombie")
		if err := zombie.publish(ctx, record(1, "zombie")); err != nil {
			t.Fatalf("%s: leader zombie: %v", policy, err)
		}
		if midPublish {
			if err := zombie.cl.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			if err := zombie.cl.ProduceSync(ctx, record(2, "zombie")).FirstErr(); err != nil {
				t.Fatalf("%s: the zombie's produce: %v", policy, err)
			}
		}
		leader := claim("leader") // takes over while the zombie is paused
		if err := leader.publish(ctx, record(2, "leader")); err != nil {
			t.Fatalf("%s: new leader: %v", policy, err)
		}
		// The leader is mid-publish: its transaction holds version 3.
		if err := leader.cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := leader.cl.ProduceSync(ctx, record(3, "leader")).FirstErr(); err != nil {
			t.Fatalf("%s: the leader's produce: %v", policy, err)
		}
		// The zombie wakes and publishes twice (its pending version, then
		// its final one on the way out).
		for i := range 2 {
			err := zombie.publish(ctx, record(3, "zombie"))
			t.Logf("%s: the zombie's publish %d: %v", policy, i+1, err)
			if !errors.Is(err, errFenced) {
				t.Fatalf("%s: the zombie's publish %d: %v; want errFenced", policy, i+1, err)
			}
		}
		if err := leader.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatalf("%s: the leader's commit after the zombie woke: %v; want it committed", policy, err)
		}
		var got []string
		for _, w := range readWeights(ctx, t, kc.Seeds, wTopic, kgo.ReadCommitted()) {
			if w.GetPolicyName() == policy {
				got = append(got, fmt.Sprintf("%d:%s", w.GetVersion(), w.GetEnvelope().GetProducer()))
			}
		}
		if want := "1:zombie 2:leader 3:leader"; strings.Join(got, " ") != want {
			t.Errorf("%s: read committed: %s; want %s", policy, strings.Join(got, " "), want)
		}
	}
}

// TestIntegrationLearnerFencedStops runs a leading learner in process while
// another claims its policy's weights producer behind its back (a takeover
// it has not noticed: its lease is untouched). Its next publish is
// rejected; it fails with errFenced (the process would exit non-zero)
// instead of publishing, retrying or panicking, and nothing it trained
// after the claim is visible.
func TestIntegrationLearnerFencedStops(t *testing.T) {
	kc := kafkatest.Real(t, "lz", topics.WithPartitions(2))
	seeds, cat := kc.Seeds, kc.Catalog
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg, err := config.Parse([]string{"-brokers=" + strings.Join(seeds, ",")}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	f := kafka.NewFactory(cfg, seeds, nil)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	produce := func(seed uint64) {
		t.Helper()
		for _, v := range syntheticTransitions(t, 200, seed) {
			kc.Admin.Produce(ctx, &kgo.Record{Topic: cat.Name(topics.Transitions), Key: []byte("k"), Value: v}, nil)
		}
		if err := kc.Admin.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	produce(1)
	// Experience for about 6 updates a batch (200 samples, each used half
	// a time on average, 16 a batch): the learner publishes version 2 and
	// then waits for more, so the claim below never lands in the middle of
	// a publish. There a commit the claim ends can come back
	// INVALID_TXN_STATE, an unknown outcome, which a learner holding the
	// lease settles by claiming the producer back (publishSettled) and
	// goes on: this test then timed out in CI.
	svc, err := New(cfg, f, cat, WithPolicyName("zombie"), WithBatchSize(16), WithPublishEvery(3), WithReplayRatio(0.5), WithInstanceID("a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = svc.Stop(context.Background()) }()
	for svc.Version() < 2 {
		select {
		case err := <-svc.Failed():
			t.Fatalf("learner failed before the claim: %v", err)
		case <-ctx.Done():
			t.Fatalf("no version 2: %v", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	other, err := claimWeights(ctx, f, "other", weightsTxnID(cat.Prefix, "zombie"), log)
	if err != nil {
		t.Fatal(err)
	}
	defer other.close()
	atClaim := publishedVersions(ctx, t, seeds, cat.Name(topics.Weights))
	produce(2) // more experience, so the fenced learner trains and publishes again
	select {
	case err = <-svc.Failed():
	case <-ctx.Done():
		t.Fatalf("the fenced learner did not fail: %v", ctx.Err())
	}
	t.Logf("fenced learner failed at version %d (topic at the claim: %d versions): %v", svc.Version(), len(atClaim), err)
	if !errors.Is(err, errFenced) {
		t.Fatalf("failure %v; want errFenced", err)
	}
	after := publishedVersions(ctx, t, seeds, cat.Name(topics.Weights))
	if len(after) != len(atClaim) {
		t.Errorf("%d versions published after the claim by a fenced learner", len(after)-len(atClaim))
	}
	for i, w := range after {
		if w.GetVersion() != uint64(i+1) || w.GetParentVersion() != uint64(i) {
			t.Errorf("record %d: version %d parent %d", i, w.GetVersion(), w.GetParentVersion())
		}
	}
}

// TestIntegrationLearnerSettlesUnknownCommit: a leader whose weights commit
// the coordinator refuses (INVALID_TXN_STATE: something ended its
// transaction behind its back, at its own epoch) settles the outcome
// instead of stopping: it claims the producer again and publishes the
// version once more only if the topic lacks it. A learner that does not
// hold the lease leaves the error as it is. Each version is committed
// exactly once. A commit that runs out of its attempt's time (a broker too
// slow to answer: 12-06, short of direct memory) is settled on a budget of
// its own, not the attempt's spent one.
func TestIntegrationLearnerSettlesUnknownCommit(t *testing.T) {
	kc := kafkatest.Real(t, "lsu")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wTopic := kc.Catalog.Name(topics.Weights)
	// A client that speaks transactions as before KIP-890 part 2: its
	// EndTxn (v4) ends a transaction without bumping the epoch, so the
	// producer's own commit that follows is refused, not fenced.
	old := kc.Client(t, kgo.MaxVersions(kversion.V3_9_0()))
	cases := []struct {
		name    string
		commit  bool // what the other client does to the transaction
		slow    bool // instead, the commit starts after its attempt's deadline
		leads   bool
		want    string // committed versions, or the error wanted
		settled string // the outcome counted
	}{
		{name: "aborted", commit: false, leads: true, want: "1 2", settled: "republished"},
		{name: "committed", commit: true, leads: true, want: "1 2", settled: "committed"},
		{name: "not-leading", commit: false, leads: false, want: "unknown"},
		{name: "slow-commit", slow: true, leads: true, want: "1 2", settled: "republished"},
	}
	for _, tc := range cases {
		policy := tc.name
		fx := newWeightsFixture(ctx, t, kc, policy)
		id := fx.id
		ev := func(version uint64) (*eventspb.Weights, *kgo.Record) { return fx.version(version, "leader") }
		p := fx.claim("leader")
		var settled []string
		p.onSettled = func(outcome string) { settled = append(settled, outcome) }
		leads := func(context.Context) error {
			if tc.leads {
				return nil
			}
			return errLeaseLost
		}
		w1, r1 := ev(1)
		if err := p.publishSettled(ctx, r1, w1, wTopic, leads); err != nil {
			t.Fatalf("%s: version 1: %v", tc.name, err)
		}
		ended := false
		const attempt = 3 * time.Second
		p.testHookBeforeCommit = func() {
			if ended {
				return
			}
			ended = true
			if tc.slow {
				time.Sleep(attempt + attempt/2)
				return
			}
			pid, epoch, err := p.cl.ProducerID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			req := kmsg.NewPtrEndTxnRequest()
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, tc.commit
			resp, err := req.RequestWith(ctx, old)
			if err == nil {
				err = kerr.ErrorForCode(resp.ErrorCode)
			}
			if err != nil {
				t.Fatalf("%s: ending the transaction behind the producer's back: %v", tc.name, err)
			}
		}
		w2, r2 := ev(2)
		if tc.slow {
			p.attemptTimeout = attempt
		}
		err := p.publishSettled(ctx, r2, w2, wTopic, leads)
		p.attemptTimeout = 0
		t.Logf("%s: version 2: %v", tc.name, err)
		if !ended {
			t.Fatalf("%s: the transaction was not ended behind the producer's back", tc.name)
		}
		var got []string
		for _, w := range readWeights(ctx, t, kc.Seeds, wTopic, kgo.ReadCommitted()) {
			if w.GetPolicyName() == policy {
				got = append(got, fmt.Sprint(w.GetVersion()))
			}
		}
		t.Logf("%s: committed %v, settled %v", tc.name, got, settled)
		if strings.Join(settled, " ") != tc.settled {
			t.Errorf("%s: settled %v; want %q", tc.name, settled, tc.settled)
		}
		if tc.want == "unknown" {
			if !errors.Is(err, errUnknownOutcome) {
				t.Errorf("%s: %v; want errUnknownOutcome", tc.name, err)
			}
			if strings.Join(got, " ") != "1" {
				t.Errorf("%s: committed %v; want only 1 (not settled, not published again)", tc.name, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v; want it settled", tc.name, err)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: committed %v; want %s", tc.name, got, tc.want)
		}
		// The settled producer publishes on.
		w3, r3 := ev(3)
		if err := p.publishSettled(ctx, r3, w3, wTopic, leads); err != nil {
			t.Errorf("%s: version 3 after settling: %v", tc.name, err)
		}
	}
}

// weightsFixture publishes versions of one policy by hand, on the real
// broker: claim claims the policy's weights producer, version and record
// make a version's event and record.
type weightsFixture struct {
	t                 *testing.T
	ctx               context.Context
	f                 *kafka.Factory
	log               *slog.Logger
	topic, policy, id string
}

func newWeightsFixture(ctx context.Context, t *testing.T, kc *kafkatest.Cluster, policy string) *weightsFixture {
	return &weightsFixture{t: t, ctx: ctx, f: kafka.NewFactory(&config.Config{InstanceID: "test"}, kc.Seeds, nil),
		log: slog.New(slog.NewTextHandler(io.Discard, nil)), topic: kc.Catalog.Name(topics.Weights), policy: policy,
		id: weightsTxnID(kc.Catalog.Prefix, policy)}
}

// claim claims the policy's weights producer as name, closed at cleanup.
func (w *weightsFixture) claim(name string) *weightsProducer {
	w.t.Helper()
	p, err := claimWeights(w.ctx, w.f, name, w.id, w.log)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(p.close)
	return p
}

// version is version's event by producer by (its model bytes name both,
// so that two publishers' versions differ) and its record.
func (w *weightsFixture) version(version uint64, by string) (*eventspb.Weights, *kgo.Record) {
	w.t.Helper()
	return w.versionOf(version, by, []byte(fmt.Sprintf("%s-%s-%d", w.policy, by, version)))
}

// versionOf is version's event by producer by with model bytes onnx, and
// its record.
func (w *weightsFixture) versionOf(version uint64, by string, onnx []byte) (*eventspb.Weights, *kgo.Record) {
	w.t.Helper()
	sum := sha256.Sum256(onnx)
	ev := &eventspb.Weights{Envelope: eventspb.NewEnvelope(by), PolicyName: w.policy, Version: version,
		ParentVersion: version - 1, Onnx: onnx, OnnxSha256: hex.EncodeToString(sum[:])}
	b, err := eventspb.Marshal(ev)
	if err != nil {
		w.t.Fatal(err)
	}
	return ev, &kgo.Record{Topic: w.topic, Key: []byte(w.policy), Value: b}
}

// record is version's record by producer by.
func (w *weightsFixture) record(version uint64, by string) *kgo.Record {
	_, rec := w.version(version, by)
	return rec
}
