package learner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

// errLeaseLost: the lease group gave the lease to another learner, which
// may lead the policy now. The learner stops; it never publishes again.
var errLeaseLost = errors.New("the learner lease group gave the lease to another learner")

// leaseState is where a learner stands in its lease group.
type leaseState int

const (
	// leaseStandby: no assignment yet, or one without partition 0.
	leaseStandby leaseState = iota
	// leaseHeld: the latest assignment gave this member partition 0.
	leaseHeld
	// leaseUncertain: the member held the lease when its group session
	// errored (its coordinator went away, a heartbeat failed). Whether the
	// group still counts it as the holder is unknown until it has joined
	// again: it publishes nothing meanwhile.
	leaseUncertain
	// leaseLost: partition 0 went to another member. Final.
	leaseLost
)

func (s leaseState) String() string {
	return [...]string{"standby", "held", "uncertain", "lost"}[s]
}

// lease is a learner's claim to lead its policy: membership of the
// policy's lease group on the one-partition lease topic. The member the
// group assigns partition 0 leads (trains and publishes); every other
// member stands by, holding no partition, until the group gives partition 0
// to it: the leader left or its session timed out (kill -9: after the
// session timeout). The sticky balancer keeps partition 0 where it is when
// a standby joins, so a standby never takes the lease from a live leader.
//
// A group session that errors (the group's coordinator broker died, a
// heartbeat could not be sent) is not a lost lease: franz-go reports the
// partitions lost and joins again by itself. The lease is uncertain until
// that join's assignment says whose partition 0 is; a leader publishes
// nothing while it is, then goes on (partition 0 is its own again) or
// stops (another member has it). Only a rebalance that revokes partition 0,
// or a join that gives it to another member, loses the lease.
//
// The lease only decides who should lead. What keeps a learner that lost it
// without noticing (paused, cut off) from publishing is the weights
// producer's transactional id: the new leader's producer fences it.
type lease struct {
	cl    *kgo.Client
	topic string
	log   *slog.Logger
	// onChange, when set, is told of every change of state (metrics).
	onChange func(from, to leaseState)

	settledOnce, acquiredOnce, lostOnce sync.Once
	settled                             chan struct{} // the group's first assignment arrived (leader or standby)
	acquired                            chan struct{} // partition 0 was given to this member
	lost                                chan struct{} // partition 0 went to another member (leaseLost)

	mu      sync.Mutex
	state   leaseState
	closing bool
	// changed is closed (and replaced) at every change of state: awaitLead
	// waits on it.
	changed chan struct{}
}

// newLease joins group on topic with a session of timeout: a member that
// stops heartbeating loses the lease that long after its last heartbeat.
func newLease(f *kafka.Factory, group, topic string, timeout time.Duration, log *slog.Logger) (*lease, error) {
	l := &lease{topic: topic, log: log, changed: make(chan struct{}),
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
		kgo.OnPartitionsLost(l.sessionLost),
	)
	if err != nil {
		return nil, err
	}
	l.cl = cl
	return l, nil
}

// assigned runs at the end of every join, with what was newly assigned
// (franz-go calls it even when nothing was). A cooperative member keeps
// what it had without its being assigned again, so an empty assignment
// changes nothing for a holder; after a session error franz-go forgets
// what the member had, so there an assignment without partition 0 means
// another member has it.
func (l *lease) assigned(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	switch st := l.get(); {
	case l.holds(m) && st != leaseLost:
		if st == leaseUncertain {
			l.log.Info("the learner lease group joined again and gave the lease back to this member")
		}
		l.set(leaseHeld)
		l.acquiredOnce.Do(func() { close(l.acquired) })
	case st == leaseUncertain:
		l.log.Error("the learner lease group joined again and gave the lease to another member")
		l.set(leaseLost)
	}
	l.settledOnce.Do(func() { close(l.settled) })
}

// revoked runs when a rebalance takes partitions away (or the client
// leaves the group): another member is given partition 0.
func (l *lease) revoked(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	if l.holds(m) && l.get() == leaseHeld {
		l.set(leaseLost)
	}
}

// sessionLost runs when the group session errored while partitions were
// held: the coordinator may still count this member as the holder, or may
// have given the lease away; franz-go joins again and assigned says which.
func (l *lease) sessionLost(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	if l.holds(m) && l.get() == leaseHeld {
		l.log.Warn("the learner lease group's session errored; publishing pauses until the group is joined again")
		l.set(leaseUncertain)
	}
}

func (l *lease) get() leaseState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state
}

// set moves to state to; our own close moves nowhere (the lease is given
// up, not lost), and leaseLost is final.
func (l *lease) set(to leaseState) {
	l.mu.Lock()
	from := l.state
	if l.closing || from == to || from == leaseLost {
		l.mu.Unlock()
		return
	}
	l.state = to
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
	if to == leaseLost {
		l.lostOnce.Do(func() { close(l.lost) })
	}
	if l.onChange != nil {
		l.onChange(from, to)
	}
}

func (l *lease) holds(m map[string][]int32) bool {
	for _, p := range m[l.topic] {
		if p == 0 {
			return true
		}
	}
	return false
}

// leads reports whether this member holds the lease now (not while it is
// uncertain).
func (l *lease) leads() bool { return l.get() == leaseHeld }

// awaitLead returns nil once this member holds the lease, errLeaseLost once
// another member does, or ctx's error: a leader calls it before it
// publishes, so that nothing goes out while the lease is uncertain.
func (l *lease) awaitLead(ctx context.Context) error {
	for {
		l.mu.Lock()
		st, changed := l.state, l.changed
		l.mu.Unlock()
		switch st {
		case leaseHeld:
			return nil
		case leaseLost:
			return errLeaseLost
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("unable to confirm the learner lease (%s): %w", st, ctx.Err())
		case <-changed:
		}
	}
}

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
	l.mu.Lock()
	l.closing = true
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.cl.LeaveGroupContext(ctx)
	l.cl.Close()
}
