package joiner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

// run is the consume-transform-produce loop of one session. pollCtx ends
// consuming for good (Stop); sessCtx ends this session too (the stall
// watchdog); txnCtx is only canceled when Stop's deadline passes. It
// returns nil when stopping, a *sessionError when the session must be
// rebuilt, and any other error when the member cannot go on.
func (s *Service) run(pollCtx, sessCtx, txnCtx context.Context) error {
	ended := func() error {
		if pollCtx.Err() != nil {
			return nil
		}
		return sessionErr(errStalled)
	}
	l := &kafka.Loop{Name: "joiner", Poller: s.sess, Max: s.maxBatch, Log: s.log, AllowRebalance: true,
		Handle: func(sessCtx context.Context, fetches kgo.Fetches) error {
			if fetches.NumRecords() == 0 {
				return nil
			}
			if s.rebalanced.Swap(false) {
				// The session aborts the first transaction that ends after a
				// revoke, even one begun after it. Ending the empty one now
				// clears that and rewinds to the committed offsets, so this
				// batch is fetched again instead of joined, aborted, restored
				// and joined again.
				ctx, cancel := context.WithTimeout(txnCtx, s.endTimeout())
				_, err := s.sess.End(ctx, kgo.TryAbort)
				cancel()
				if err != nil {
					return sessionErr(fmt.Errorf("unable to reset the transaction session after a rebalance: %w", err))
				}
				return nil
			}
			return s.transact(sessCtx, txnCtx, fetches)
		}}
	// Records polled as the session ends are not processed and their
	// offsets not committed: the group's next owner reads them.
	switch err := l.Run(sessCtx); {
	case err == nil, errors.Is(err, errStopping):
		return ended()
	default:
		return err
	}
}

// endTimeout bounds the produce, flush and end of one transaction. franz-go
// waits for them as long as its context allows, and after a broker outage
// a session's End can wait for a heartbeat of a group it has left; the
// broker aborts a transaction after txnTimeout anyway, so waiting longer
// than that, plus a session timeout for the group to settle, gains nothing.
func (s *Service) endTimeout() time.Duration {
	return max(s.txnTimeout+s.sessionTimeout, 10*time.Second)
}

// errStopping: the session ended (Stop, or the stall watchdog) before the
// batch's transaction began; the batch is left to the next owner.
var errStopping = errors.New("stopping")

// transact joins one polled batch inside one transaction. Restoring state
// for the batch happens before the transaction and gives up when sessCtx
// ends; the transaction itself only stops for txnCtx or its own bound.
// Errors of the Kafka session are *sessionError; errors of the join are not.
func (s *Service) transact(sessCtx, txnCtx context.Context, fetches kgo.Fetches) error {
	t0 := time.Now()
	machines, err := s.machinesFor(sessCtx, fetches)
	if err != nil {
		if sessCtx.Err() != nil {
			return errStopping
		}
		return err
	}
	if err := s.sess.Begin(); err != nil {
		return sessionErr(fmt.Errorf("unable to begin a transaction: %w", err))
	}
	ctx, cancel := context.WithTimeout(txnCtx, s.endTimeout())
	defer cancel()
	var applyErr error
	work := map[int32][]kgo.FetchTopicPartition{}
	fetches.EachPartition(func(ftp kgo.FetchTopicPartition) {
		if len(ftp.Records) == 0 {
			return
		}
		if machines[ftp.Partition] == nil || s.kinds[ftp.Topic] == 0 {
			if applyErr == nil {
				applyErr = fmt.Errorf("unable to join %s[%d]: the partition is not assigned to this member", ftp.Topic, ftp.Partition)
			}
			return
		}
		work[ftp.Partition] = append(work[ftp.Partition], ftp)
	})

	var (
		mu         sync.Mutex
		produceErr error
		stats      Stats
	)
	promise := func(r *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			if produceErr == nil {
				produceErr = kafka.NewRecordError(r, err)
			}
			mu.Unlock()
		}
	}
	if applyErr == nil {
		// Partitions are independent machines: join them in parallel,
		// each producing its own output as it goes.
		now := time.Now()
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		var wg sync.WaitGroup
		for _, p := range slices.Sorted(maps.Keys(work)) {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				st, err := s.joinPartition(ctx, machines[p], work[p], now, promise)
				mu.Lock()
				defer mu.Unlock()
				stats.Add(st)
				if err != nil && applyErr == nil {
					applyErr = err
				}
			}()
		}
		wg.Wait()
	}
	t1 := time.Now()
	var flushErr error
	if err := s.sess.Client().Flush(ctx); err != nil {
		flushErr = fmt.Errorf("unable to flush the transaction: %w", err)
	}
	t2 := time.Now()
	mu.Lock()
	perr := produceErr
	mu.Unlock()
	try := kgo.TryCommit
	if applyErr != nil || perr != nil || flushErr != nil {
		try = kgo.TryAbort
	}
	committed, err := s.sess.End(ctx, try)
	s.log.Debug("transaction", "records", fetches.NumRecords(), "committed", committed,
		"join", t1.Sub(t0).Round(time.Millisecond), "flush", t2.Sub(t1).Round(time.Millisecond), "end", time.Since(t2).Round(time.Millisecond))
	if err != nil || flushErr != nil {
		s.invalidate(machines)
		switch {
		case applyErr != nil:
			return applyErr
		case err != nil:
			return sessionErr(errors.Join(flushErr, fmt.Errorf("unable to end the transaction: %w", err)))
		}
		return sessionErr(flushErr)
	}
	if !committed {
		// The offsets went back to the last commit; so must the state.
		s.invalidate(machines)
		s.metrics.txns.WithLabelValues("aborted").Inc()
		s.mu.Lock()
		s.txns[1]++
		s.mu.Unlock()
		switch {
		case applyErr != nil:
			return applyErr
		case perr != nil && !kafka.Retryable(perr):
			// The producer itself failed (its id needs reloading, it was
			// fenced by the broker's timeout abort): a new session.
			return sessionErr(fmt.Errorf("unable to write the joiner's output: %w", perr))
		}
		s.log.Info("transaction aborted; the batch will be consumed again", "produce_err", perr)
		return nil
	}
	s.lastProgress.Store(time.Now().UnixNano())
	s.endOutage()
	s.metrics.add(stats)
	s.metrics.txns.WithLabelValues("committed").Inc()
	if !s.loggedCommit.Swap(true) {
		// Once per assignment: per-transaction lines are debug.
		s.log.Info("first transaction of the assignment committed", "records", fetches.NumRecords(), "transitions", stats.Transitions)
	}
	var pending, open int64
	s.mu.Lock()
	for _, m := range s.parts {
		if m != nil {
			pending += m.Stats().Pending
			open += int64(m.OpenEpisodes())
		}
	}
	s.committed.Add(stats)
	s.txns[0]++
	s.mu.Unlock()
	s.metrics.pending.Set(float64(pending))
	s.metrics.openEpisodes.Set(float64(open))
	return nil
}

// joinPartition feeds one partition's records of the batch to its machine
// and produces the output into the open transaction.
func (s *Service) joinPartition(ctx context.Context, m *Machine, ftps []kgo.FetchTopicPartition, now time.Time, promise func(*kgo.Record, error)) (Stats, error) {
	for _, ftp := range ftps {
		kind := s.kinds[ftp.Topic]
		for _, r := range ftp.Records {
			m.Apply(Record{Kind: kind, Value: r.Value, Source: Source{
				Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Timestamp: r.Timestamp.UnixNano(),
			}})
		}
	}
	out, err := m.Take()
	if err != nil {
		return Stats{}, err
	}
	return out.Stats, s.produce(ctx, m.Partition(), out, now, promise)
}

// produce writes one machine's output into the open transaction.
func (s *Service) produce(ctx context.Context, p int32, out Output, now time.Time, promise func(*kgo.Record, error)) error {
	send := func(topic string, key []byte, msg eventspb.Event) error {
		b, err := eventspb.Marshal(msg)
		if err != nil {
			return fmt.Errorf("unable to write to %s: %w", topic, err)
		}
		s.sess.Produce(ctx, &kgo.Record{Topic: topic, Key: key, Value: b}, promise)
		return nil
	}
	for i, tr := range out.Transitions {
		// join_ms is the one field that measures the joiner rather than
		// the history.
		b, err := out.MarshalTransition(i, uint32(max(now.UnixNano()-tr.Envelope.GetProducedAtUnixNano(), 0)/1e6))
		if err != nil {
			return err
		}
		s.sess.Produce(ctx, &kgo.Record{Topic: s.trTopic, Key: []byte(tr.EpisodeId), Value: b}, promise)
	}
	for _, ep := range out.Episodes {
		if err := send(s.epTopic, []byte(ep.TaskId), ep); err != nil {
			return err
		}
	}
	for _, dl := range out.DeadLetters {
		if err := send(s.dlqTopic, []byte(dl.SourceTopic), dl); err != nil {
			return err
		}
	}
	for _, c := range out.Changelog {
		s.sess.Produce(ctx, &kgo.Record{Topic: s.changelog, Partition: p, Key: []byte(c.Key), Value: c.Value}, promise)
	}
	return nil
}

// machinesFor returns the machines of the batch's partitions, restoring
// from the changelog those that have none yet (newly assigned, or rolled
// back by an abort). It runs before the transaction begins: a restore may
// wait for a dead member's transaction to be aborted by the broker.
func (s *Service) machinesFor(ctx context.Context, fetches kgo.Fetches) (map[int32]*Machine, error) {
	want := map[int32]bool{}
	fetches.EachPartition(func(ftp kgo.FetchTopicPartition) {
		if len(ftp.Records) > 0 {
			want[ftp.Partition] = true
		}
	})
	machines := map[int32]*Machine{}
	var restore []int32
	s.mu.Lock()
	for p := range want {
		m, ok := s.parts[p]
		switch {
		case !ok:
			// Not ours: transact refuses the batch.
		case m == nil:
			restore = append(restore, p)
		default:
			machines[p] = m
		}
	}
	s.mu.Unlock()
	if len(restore) == 0 {
		return machines, nil
	}
	slices.Sort(restore)
	restored, err := s.restore(ctx, restore)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	for p, m := range restored {
		if _, ok := s.parts[p]; ok {
			s.parts[p] = m
		}
		machines[p] = m
	}
	s.mu.Unlock()
	return machines, nil
}

// restore rebuilds the machines of partitions from the changelog.
func (s *Service) restore(ctx context.Context, ps []int32) (map[int32]*Machine, error) {
	t0 := time.Now()
	// A restore may wait a transaction timeout for the changelog's end;
	// the stall watchdog leaves it alone meanwhile.
	s.restoring.Store(true)
	defer func() {
		s.lastProgress.Store(time.Now().UnixNano())
		s.restoring.Store(false)
	}()
	machines := map[int32]*Machine{}
	for _, p := range ps {
		m, err := NewMachine(p, s.set)
		if err != nil {
			return nil, err
		}
		machines[p] = m
	}
	var records atomic.Int64
	// The read waits for every transaction below the changelog's end to
	// be resolved, for as long as the broker takes (a dead owner's one
	// until its transaction timeout); say so instead of going silent.
	stopWarn := warnWhile(s.log, restoreWarnEvery, "join state restore still waiting for the changelog's end (an open transaction on it must commit or abort first)",
		func() []any {
			return []any{"partitions", ps, "changelog_records", records.Load(), "waited", time.Since(t0).Round(time.Second)}
		})
	err := ReadCommitted(ctx, func(opts ...kgo.Opt) (*kgo.Client, error) {
		return s.factory.NewClient("joiner-restore", opts...)
	}, s.changelog, ps, func(r *kgo.Record) error {
		records.Add(1)
		v := r.Value
		if len(v) == 0 {
			v = nil
		}
		if err := machines[r.Partition].Restore(string(r.Key), v); err != nil {
			return fmt.Errorf("unable to restore partition %d from %s@%d: %w", r.Partition, s.changelog, r.Offset, err)
		}
		return nil
	})
	stopWarn()
	if err != nil {
		return nil, err
	}
	// The changelog names the records of pending events; their bytes are
	// read back from the inputs.
	var sources []Source
	for _, p := range ps {
		sources = append(sources, machines[p].MissingPayloads()...)
	}
	if err := ReadRecords(ctx, func(opts ...kgo.Opt) (*kgo.Client, error) {
		return s.factory.NewClient("joiner-restore", opts...)
	}, sources, func(r *kgo.Record) error {
		return machines[r.Partition].FillPayload(Source{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Timestamp: r.Timestamp.UnixNano()}, r.Value)
	}); err != nil {
		return nil, err
	}
	var episodes int
	var pending int64
	for _, m := range machines {
		episodes += m.OpenEpisodes()
		pending += m.Stats().Pending
	}
	s.metrics.restores.Add(float64(len(ps)))
	s.metrics.restored.Add(float64(pending))
	s.log.Info("join state restored", "partitions", ps, "changelog_records", records.Load(), "records_read_back", len(sources), "open_episodes", episodes, "pending_events", pending, "took", time.Since(t0).Round(time.Millisecond))
	return machines, nil
}

// restoreWarnEvery is how often a restore that has not reached the
// changelog's end says so.
const restoreWarnEvery = 10 * time.Second

// warnWhile logs msg with the attributes attrs returns every interval until
// stop is called: a wait with no bound of its own stays visible.
func warnWhile(log *slog.Logger, every time.Duration, msg string, attrs func() []any) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				log.Warn(msg, attrs()...)
			}
		}
	}()
	return func() { close(done); <-exited }
}

// invalidate forgets the state of machines after an abort; it is restored
// from the changelog before their next batch.
func (s *Service) invalidate(machines map[int32]*Machine) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range machines {
		if _, ok := s.parts[p]; ok {
			s.parts[p] = nil
		}
	}
}
