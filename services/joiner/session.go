package joiner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// A member's Kafka session (one GroupTransactSession: the group membership,
// the consumer and the transactional producer) does not always come back by
// itself from a broker outage. Measured on Kafka 4.1 with franz-go 1.22:
// after the broker was killed and restarted, a transaction's End failed
// ("unable to dial"), its producer id was marked for reloading, and the
// group had been left; with a 3-broker cluster losing one node, the consumer
// looped on "reload offsets from load failure" for minutes. The session's
// state is then a mix of a failed producer id, an unknown transaction and a
// group it may or may not still be in. Instead of reasoning about every such
// mix, the member treats its session as disposable: any Kafka error from a
// transaction, or no commit for the stall timeout while input waits, ends
// the session. The member closes it, forgets all join state (the
// changelog, committed with the offsets, is the truth), fences whatever
// transaction the old session left open, and starts a new session that joins
// the group and restores like a new member. Exactly once holds because
// nothing of the old session can commit after the fence.

// sessionError is a failure of the Kafka session rather than of the join:
// the member rebuilds its session and goes on.
type sessionError struct{ err error }

func (e *sessionError) Error() string { return e.err.Error() }
func (e *sessionError) Unwrap() error { return e.err }

// sessionErr marks err as a session failure.
func sessionErr(err error) error {
	if err == nil {
		return nil
	}
	return &sessionError{err: err}
}

// errStalled: the stall watchdog ended a session that had input waiting and
// committed nothing for the stall timeout.
var errStalled = errors.New("no transaction committed while input is waiting")

// fencedLimit is how many sessions in a row may be fenced, with no commit
// between them, before the member gives up: a session is fenced once after
// an outage (the broker aborted its transaction), but a member fenced again
// and again shares its instance id with another running member.
const fencedLimit = 3

// newSession builds the member's Kafka session. Before it, the transaction
// a previous session (or a previous process with this instance id) left
// open is aborted, so the changelog and the stable offsets are readable at
// once instead of after the broker's transaction timeout.
func (s *Service) newSession(ctx context.Context) (*kgo.GroupTransactSession, error) {
	if err := s.fencePrevious(ctx); err != nil {
		return nil, err
	}
	base, err := kafka.Opts(s.cfg, s.factory.Seeds(), s.cfg.InstanceID+"/joiner", s.log)
	if err != nil {
		return nil, err
	}
	inputs := slices.Sorted(maps.Keys(s.kinds))
	sess, err := kgo.NewGroupTransactSession(append(base,
		kgo.ConsumerGroup(s.group),
		kgo.ConsumeTopics(inputs...),
		// Range gives every member the same partition numbers of each
		// input topic (same partition count, same subscription): the
		// co-partitioning the join relies on. assigned() checks it.
		kgo.Balancers(kgo.RangeBalancer()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.TransactionalID(s.txnID()),
		kgo.TransactionTimeout(s.txnTimeout),
		kgo.SessionTimeout(s.sessionTimeout),
		kgo.HeartbeatInterval(max(s.sessionTimeout/10, 100*time.Millisecond)),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(s.assigned),
		kgo.OnPartitionsRevoked(s.revoked),
		kgo.OnPartitionsLost(s.revoked),
		kgo.RecordPartitioner(partitioner{changelog: s.changelog, keyed: kgo.StickyKeyPartitioner(nil)}),
	)...)
	if err != nil {
		return nil, fmt.Errorf("unable to create the joiner's Kafka client: %w", err)
	}
	return sess, nil
}

func (s *Service) txnID() string { return s.group + "/" + s.instance }

// fencePrevious sends InitProducerId for the member's transactional id, as a
// new producer would: the coordinator aborts the transaction the previous
// producer of this id left open and bumps the epoch, so that producer can
// never commit again. It retries until ctx ends (the broker may be coming
// back).
func (s *Service) fencePrevious(ctx context.Context) error {
	cl, err := s.factory.NewClient("joiner-fence")
	if err != nil {
		return err
	}
	defer cl.Close()
	id := s.txnID()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = &id
	req.TransactionTimeoutMillis = int32(s.txnTimeout.Milliseconds())
	wait := backoff.Backoff{Min: time.Second, Max: time.Second}
	for {
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil {
			return nil
		}
		err = fmt.Errorf("unable to fence the previous transaction of %s: %w", id, err)
		s.log.Warn("fencing the previous transaction failed; retrying", "err", err)
		if werr := wait.Wait(ctx); werr != nil {
			return errors.Join(err, werr)
		}
	}
}

// closeSession leaves the group within a bound (a broker that is away
// cannot acknowledge the leave; the group then times the member out) and
// closes the client.
func (s *Service) closeSession(sess *kgo.GroupTransactSession) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = sess.Client().LeaveGroupContext(ctx)
	sess.Close()
}

// supervise runs sessions one after the other until the member stops or
// fails for good.
func (s *Service) supervise(pollCtx, txnCtx context.Context, sess *kgo.GroupTransactSession) {
	defer close(s.done)
	fenced := 0
	for attempt := 1; ; attempt++ {
		s.sess = sess
		before, _ := s.Transactions()
		sessCtx, endSession := context.WithCancel(pollCtx)
		stopWatch := s.watchStall(sessCtx, endSession)
		err := s.run(pollCtx, sessCtx, txnCtx)
		stopWatch()
		endSession()
		s.closeSession(sess)
		if pollCtx.Err() != nil {
			return
		}
		var se *sessionError
		if !errors.As(err, &se) || !rebuildable(err) {
			s.fail(err)
			return
		}
		if after, _ := s.Transactions(); after > before {
			fenced = 0
		}
		if errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) {
			if fenced++; fenced >= fencedLimit {
				s.fail(fmt.Errorf("unable to keep a transactional session: fenced %d times in a row without a commit (is another member running with instance id %q?): %w", fenced, s.instance, err))
				return
			}
		}
		s.outage(err)
		s.forgetState()
		s.metrics.sessions.Inc()
		s.log.Warn("joiner session lost; rebuilding it (join state is restored from the changelog)", "err", err, "session", attempt)
		for {
			if backoff.Sleep(pollCtx, rebuildBackoff) != nil {
				return
			}
			next, err := s.newSession(pollCtx)
			if err == nil {
				sess = next
				break
			}
			if pollCtx.Err() != nil {
				return
			}
			s.log.Warn("unable to rebuild the joiner session; retrying", "err", err)
		}
	}
}

// rebuildBackoff spaces session rebuilds: a broker that is away refuses
// connections at once.
const rebuildBackoff = time.Second

// rebuildable: a new session can cure err. Configuration problems (a
// record too large for its topic, missing rights) would fail again.
func rebuildable(err error) bool {
	switch {
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge),
		errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.TopicAuthorizationFailed),
		errors.Is(err, kerr.GroupAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed),
		errors.Is(err, kerr.TransactionalIDAuthorizationFailed):
		return false
	}
	return true
}

// forgetState drops every machine: the new session is assigned partitions
// afresh and restores them from the changelog.
func (s *Service) forgetState() {
	s.mu.Lock()
	clear(s.parts)
	s.mu.Unlock()
	s.rebalanced.Store(false)
	s.metrics.partitions.Set(0)
}

// watchStall ends the session (endSession) when no transaction committed
// (and no restore ended) for the stall timeout while the group has input
// waiting: a session that
// polls nothing, or retries something forever, while there is work. The
// check asks the broker for the group's lag, so an idle member is left
// alone. It returns a func that stops the watch.
func (s *Service) watchStall(ctx context.Context, endSession context.CancelFunc) (stop func()) {
	if s.stallTimeout <= 0 {
		return func() {}
	}
	watchCtx, cancel := context.WithCancel(ctx)
	exited := make(chan struct{})
	started := time.Now()
	go func() {
		defer close(exited)
		app.Every(watchCtx, max(s.stallTimeout/4, 100*time.Millisecond), func(ctx context.Context) {
			last := max(s.lastProgress.Load(), started.UnixNano())
			if time.Since(time.Unix(0, last)) < s.stallTimeout || s.restoring.Load() {
				return
			}
			lag, err := s.inputLag(ctx)
			if err != nil || lag == 0 {
				return // the broker is away (the session's own errors tell), or nothing waits
			}
			s.log.Warn("joiner session stalled: no transaction committed while input waits; ending it",
				"since", time.Since(time.Unix(0, last)).Round(time.Second), "lag", lag)
			endSession() // ends ctx, and so the watch
		})
	}()
	return func() { cancel(); <-exited }
}

// inputLag is the group's lag over its inputs (topics.ReadLag: the inputs
// are not transactional, so the end offset is the last record's plus one).
func (s *Service) inputLag(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lag, err := topics.ReadLag(ctx, kadm.NewClient(s.admin), s.group, slices.Sorted(maps.Keys(s.kinds))...)
	records, _ := lag.Behind()
	return records, err
}
