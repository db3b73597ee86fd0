package learner

import (
	"context"
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
