package learner

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// The first learner of a policy leads; a second one joining stands by and
// leaves the leader its lease (the sticky balancer); when the leader leaves
// the group, the standby is given the lease, and the leader's own leaving
// is not reported to it as a lost lease.
func TestLeaseOneLeaderAndHandOver(t *testing.T) {
	kc := kafkatest.Fake(t, "t.")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := kafka.NewFactory(&config.Config{InstanceID: "test"}, kc.Seeds, nil)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	topic := kc.Catalog.Name(topics.LearnerLease)
	join := func() *lease {
		t.Helper()
		l, err := newLease(f, kc.Catalog.Prefix+"learner-lease-p", topic, 6*time.Second, log)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.waitSettled(ctx, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		return l
	}
	first := join()
	if !first.leads() {
		t.Fatal("the only member of the lease group does not lead")
	}
	second := join()
	defer second.close()
	if second.leads() {
		t.Fatal("the member that joined second leads")
	}
	// The join of the second may have rebalanced the group: the first
	// must still hold the lease, and must not have been told it lost it.
	select {
	case <-first.lost:
		t.Fatal("the leader lost its lease when a standby joined")
	default:
	}
	if !first.leads() {
		t.Fatal("the leader gave its lease up when a standby joined")
	}
	first.close()
	select {
	case <-second.acquired:
	case <-ctx.Done():
		t.Fatalf("the standby was not given the lease after the leader left: %v", ctx.Err())
	}
	if !second.leads() {
		t.Fatal("the standby acquired the lease but does not lead")
	}
	select {
	case <-first.lost:
		t.Fatal("the leader's own leaving was reported as a lost lease")
	default:
	}
}

// The lease's states as the group's callbacks move them: a session error
// makes a held lease uncertain (no publishing) and the next join decides
// it, regained with partition 0 or lost without; a rebalance that revokes
// partition 0 loses it; our own close loses nothing; lost is final.
func TestLeaseStates(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const topic = "t.learner-lease"
	p0 := map[string][]int32{topic: {0}}
	none := map[string][]int32{}
	type step struct {
		do   string // assign0, assign, revoke0, sessionLost0, close
		want leaseState
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"broker fault, regained", []step{{"assign0", leaseHeld}, {"sessionLost0", leaseUncertain}, {"assign0", leaseHeld}}},
		{"broker fault, another leads", []step{{"assign0", leaseHeld}, {"sessionLost0", leaseUncertain}, {"assign", leaseLost}, {"assign0", leaseLost}}},
		{"standby joins", []step{{"assign0", leaseHeld}, {"assign", leaseHeld}}},
		{"revoked by a rebalance", []step{{"assign0", leaseHeld}, {"revoke0", leaseLost}}},
		{"standby's session errors", []step{{"assign", leaseStandby}, {"sessionLost0", leaseStandby}, {"assign0", leaseHeld}}},
		{"own close", []step{{"assign0", leaseHeld}, {"close", leaseHeld}, {"revoke0", leaseHeld}, {"sessionLost0", leaseHeld}}},
	}
	for _, tc := range cases {
		l := &lease{topic: topic, log: log, changed: make(chan struct{}),
			settled: make(chan struct{}), acquired: make(chan struct{}), lost: make(chan struct{})}
		var changes []string
		l.onChange = func(from, to leaseState) { changes = append(changes, from.String()+">"+to.String()) }
		for i, s := range tc.steps {
			switch s.do {
			case "assign0":
				l.assigned(context.Background(), nil, p0)
			case "assign":
				l.assigned(context.Background(), nil, none)
			case "revoke0":
				l.revoked(context.Background(), nil, p0)
			case "sessionLost0":
				l.sessionLost(context.Background(), nil, p0)
			case "close":
				l.closing = true
			}
			if got := l.get(); got != s.want {
				t.Fatalf("%s: after step %d (%s): %s, want %s (changes %v)", tc.name, i, s.do, got, s.want, changes)
			}
			if l.leads() != (s.want == leaseHeld) {
				t.Fatalf("%s: after step %d (%s): leads %v in state %s", tc.name, i, s.do, l.leads(), s.want)
			}
		}
		select {
		case <-l.lost:
			if l.get() != leaseLost {
				t.Errorf("%s: lost closed in state %s", tc.name, l.get())
			}
		default:
			if l.get() == leaseLost {
				t.Errorf("%s: lost, but the channel is open", tc.name)
			}
		}
		t.Logf("%s: %v", tc.name, changes)
	}
}

// awaitLead holds a publish while the lease is uncertain and releases it
// when the next join decides: nil when regained, errLeaseLost when another
// member has it.
func TestLeaseAwaitLead(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const topic = "t.learner-lease"
	p0 := map[string][]int32{topic: {0}}
	for _, regained := range []bool{true, false} {
		l := &lease{topic: topic, log: log, changed: make(chan struct{}),
			settled: make(chan struct{}), acquired: make(chan struct{}), lost: make(chan struct{})}
		l.assigned(context.Background(), nil, p0)
		if err := l.awaitLead(context.Background()); err != nil {
			t.Fatalf("held: %v", err)
		}
		l.sessionLost(context.Background(), nil, p0)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := l.awaitLead(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("uncertain: awaitLead returned %v, want it to wait", err)
		}
		done := make(chan error, 1)
		go func() { done <- l.awaitLead(context.Background()) }()
		if regained {
			l.assigned(context.Background(), nil, p0)
		} else {
			l.assigned(context.Background(), nil, map[string][]int32{})
		}
		err = <-done
		switch {
		case regained && err != nil:
			t.Errorf("regained: %v", err)
		case !regained && !errors.Is(err, errLeaseLost):
			t.Errorf("given to another: %v, want errLeaseLost", err)
		}
	}
}
