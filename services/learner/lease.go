package learner

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

// lease is a learner's claim to lead its policy: membership of the
// policy's lease group on the one-partition lease topic. The member the
// group assigns partition 0 leads (trains and publishes); every other
// member stands by, holding no partition, until the group gives partition 0
// to it: the leader left or its session timed out (kill -9: after the
// session timeout). The sticky balancer keeps partition 0 where it is when
// a standby joins, so a standby never takes the lease from a live leader.
//
// The lease only decides who should lead. What keeps a learner that lost it
// without noticing (paused, cut off) from publishing is the weights
// producer's transactional id: the new leader's producer fences it.
type lease struct {
	cl    *kgo.Client
	topic string
	log   *slog.Logger

	settledOnce, acquiredOnce, lostOnce sync.Once
	settled                             chan struct{} // the group's first assignment arrived (leader or standby)
	acquired                            chan struct{} // partition 0 is ours
	lost                                chan struct{} // partition 0 was ours and is no longer
	held                                atomic.Bool
	closing                             atomic.Bool
}

// newLease joins group on topic with a session of timeout: a member that
// stops heartbeating loses the lease that long after its last heartbeat.
func newLease(f *kafka.Factory, group, topic string, timeout time.Duration, log *slog.Logger) (*lease, error) {
	l := &lease{topic: topic, log: log,
		settled: make(chan struct{}), acquired: make(chan struct{}), lost: make(chan struct{})}
	cl, err := f.NewClient("learner-lease",
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		// Cooperative and sticky: a member joining does not move the
		// partition, so the standby leaves the leader alone.
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.SessionTimeout(timeout),
		kgo.HeartbeatInterval(max(timeout/6, 100*time.Millisecond)),
		kgo.DisableAutoCommit(), // the topic is never written: nothing to commit
		kgo.OnPartitionsAssigned(l.assigned),
		kgo.OnPartitionsRevoked(l.revoked),
		kgo.OnPartitionsLost(l.revoked),
	)
	if err != nil {
		return nil, err
	}
	l.cl = cl
	return l, nil
}

// assigned runs at the end of every join, with what was newly assigned
// (franz-go calls it even when nothing was).
func (l *lease) assigned(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	if l.holds(m) {
		l.held.Store(true)
		l.acquiredOnce.Do(func() { close(l.acquired) })
	}
	l.settledOnce.Do(func() { close(l.settled) })
}

// revoked runs when partitions are revoked (a rebalance moved them, or the
// client leaves the group) or lost (the session expired).
func (l *lease) revoked(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	if !l.holds(m) || !l.held.Swap(false) {
		return
	}
	if l.closing.Load() {
		return // our own Close: we are giving the lease up
	}
	l.lostOnce.Do(func() { close(l.lost) })
}

func (l *lease) holds(m map[string][]int32) bool {
	for _, p := range m[l.topic] {
		if p == 0 {
			return true
		}
	}
	return false
}

// leads reports whether this member holds the lease now.
func (l *lease) leads() bool { return l.held.Load() }

// waitSettled waits for the group's first assignment, at most timeout.
func (l *lease) waitSettled(ctx context.Context, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-l.settled:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		// The usual cause besides an unreachable broker: a session
		// timeout under the broker's group.min.session.timeout.ms (6s by
		// default), which it refuses at every join.
		return fmt.Errorf("unable to join the learner lease group within %s (is the lease timeout below the broker's group.min.session.timeout.ms?)", timeout)
	}
}

// close leaves the group (a standby takes the lease at once, not after the
// session timeout).
func (l *lease) close() {
	l.closing.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.cl.LeaveGroupContext(ctx)
	l.cl.Close()
}
