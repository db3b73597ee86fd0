package joiner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

// ClientFunc builds a Kafka client with extra options (kafka.Factory's
// NewClient, bound to a name).
type ClientFunc func(opts ...kgo.Opt) (*kgo.Client, error)

// ReadCommitted calls fn, in offset order per partition, for every committed
// data record of topic's partitions (all of them when partitions is nil)
// from the start of the log up to the end offsets (high watermarks) at the
// time of the call.
//
// It waits until every transaction that wrote below those ends is resolved:
// records of a transaction still open are invisible to a read_committed
// consumer until its commit or abort marker is written, which can happen
// after the producer's EndTxn returned. Control records are asked for
// (KeepControlRecords) because they are what reveals that the end is
// reached when the log ends with aborted data.
func ReadCommitted(ctx context.Context, newClient ClientFunc, topic string, partitions []int32, fn func(*kgo.Record) error) error {
	return readToEnd(ctx, newClient, topic, partitions, kgo.ReadCommitted(), fn)
}

// ReadUncommitted is ReadCommitted for every data record, the records of
// aborted transactions included: an audit compares the two to name what
// was aborted.
func ReadUncommitted(ctx context.Context, newClient ClientFunc, topic string, partitions []int32, fn func(*kgo.Record) error) error {
	return readToEnd(ctx, newClient, topic, partitions, kgo.ReadUncommitted(), fn)
}

func readToEnd(ctx context.Context, newClient ClientFunc, topic string, partitions []int32, isolation kgo.IsolationLevel, fn func(*kgo.Record) error) error {
	admCl, err := newClient()
	if err != nil {
		return err
	}
	starts, ends, err := listBounds(ctx, kadm.NewClient(admCl), topic)
	admCl.Close()
	if err != nil {
		return err
	}
	want := map[int32]bool{}
	for _, p := range partitions {
		want[p] = true
	}
	from := map[int32]kgo.Offset{}
	target := map[int32]int64{}
	for p, end := range ends[topic] {
		if partitions != nil && !want[p] {
			continue
		}
		start := starts[topic][p].Offset
		if end.Offset > start {
			from[p] = kgo.NewOffset().At(start)
			target[p] = end.Offset
		}
	}
	if len(target) == 0 {
		return nil
	}
	cl, err := newClient(
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}),
		kgo.FetchIsolationLevel(isolation),
		kgo.KeepControlRecords(),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	l := &kafka.Loop{Name: "read " + topic + " to its end", Poller: cl,
		Handle: func(_ context.Context, fetches kgo.Fetches) error {
			var cbErr error
			fetches.EachRecord(func(r *kgo.Record) {
				end, ok := target[r.Partition]
				if !ok || cbErr != nil {
					return
				}
				if r.Offset < end && !r.Attrs.IsControl() {
					cbErr = fn(r)
				}
				if r.Offset >= end-1 {
					delete(target, r.Partition)
				}
			})
			if cbErr == nil && len(target) == 0 {
				return kafka.ErrStop
			}
			return cbErr
		}}
	if err := l.Run(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("unable to read %s to its end: %w", topic, err)
	}
	return nil
}

// ReadRecords calls fn for the records at the given sources (any topics and
// partitions), reading each partition from its smallest wanted offset to
// its largest, read_committed. The sources were consumed before, so they
// are committed data records; one that the log no longer holds (deleted by
// retention) is an error naming it.
func ReadRecords(ctx context.Context, newClient ClientFunc, sources []Source, fn func(*kgo.Record) error) error {
	if len(sources) == 0 {
		return nil // most restores: nothing pending, no client needed
	}
	type tp struct {
		topic string
		part  int32
	}
	wanted := map[tp]map[int64]bool{}
	first, last := map[tp]int64{}, map[tp]int64{}
	for _, s := range sources {
		k := tp{s.Topic, s.Partition}
		if wanted[k] == nil {
			wanted[k] = map[int64]bool{}
			first[k], last[k] = s.Offset, s.Offset
		}
		wanted[k][s.Offset] = true
		first[k], last[k] = min(first[k], s.Offset), max(last[k], s.Offset)
	}
	// A record below its partition's log start was deleted (retention):
	// say so now, since a partition emptied by retention would never
	// answer the read below.
	admCl, err := newClient()
	if err != nil {
		return err
	}
	var names []string
	for k := range first {
		if !slices.Contains(names, k.topic) {
			names = append(names, k.topic)
		}
	}
	adm := kadm.NewClient(admCl)
	starts, err := listPatiently(ctx, "start", func() (kadm.ListedOffsets, error) { return adm.ListStartOffsets(ctx, names...) }, names...)
	admCl.Close()
	if err != nil {
		return err
	}
	for k, o := range first {
		if so, ok := starts.Lookup(k.topic, k.part); ok && so.Offset > o {
			return fmt.Errorf("unable to read records of %s[%d] back from offset %d: the log starts at %d now (retention deleted them)", k.topic, k.part, o, so.Offset)
		}
	}
	from := map[string]map[int32]kgo.Offset{}
	for k, o := range first {
		if from[k.topic] == nil {
			from[k.topic] = map[int32]kgo.Offset{}
		}
		from[k.topic][k.part] = kgo.NewOffset().At(o)
	}
	cl, err := newClient(
		kgo.ConsumePartitions(from),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Retention that deletes a wanted record after the check above:
		// start at the log start and report it missing.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	missing := func(k tp) error {
		var offs []int64
		for o := range wanted[k] {
			offs = append(offs, o)
		}
		return fmt.Errorf("unable to read %d records of %s[%d] back (first offset %d): they are no longer in the log (retention?)", len(offs), k.topic, k.part, slices.Min(offs))
	}
	l := &kafka.Loop{Name: "read restored records back", Poller: cl,
		Handle: func(_ context.Context, fetches kgo.Fetches) error {
			var cbErr error
			fetches.EachRecord(func(r *kgo.Record) {
				k := tp{r.Topic, r.Partition}
				w := wanted[k]
				if w == nil || cbErr != nil {
					return
				}
				if w[r.Offset] {
					delete(w, r.Offset)
					if cbErr = fn(r); cbErr != nil {
						return
					}
				}
				if r.Offset >= last[k] {
					if len(w) > 0 {
						cbErr = missing(k)
						return
					}
					delete(wanted, k)
				}
			})
			if cbErr == nil && len(wanted) == 0 {
				return kafka.ErrStop
			}
			return cbErr
		}}
	if err := l.Run(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("unable to read back %d partitions of restored records: %w", len(wanted), err)
	}
	return nil
}

// boundsPatience bounds how long listing offsets asks again.
const boundsPatience = time.Minute

// listBounds lists topic's start and end offsets, asking again while a
// partition's answer is an error (listPatiently).
func listBounds(ctx context.Context, adm *kadm.Client, topic string) (starts, ends kadm.ListedOffsets, err error) {
	if starts, err = listPatiently(ctx, "start", func() (kadm.ListedOffsets, error) { return adm.ListStartOffsets(ctx, topic) }, topic); err != nil {
		return nil, nil, err
	}
	if ends, err = listPatiently(ctx, "end", func() (kadm.ListedOffsets, error) { return adm.ListEndOffsets(ctx, topic) }, topic); err != nil {
		return nil, nil, err
	}
	return starts, ends, nil
}

// listPatiently runs list, asking again while it or a partition's answer
// is an error, for up to boundsPatience: a broker fault moves partition
// leaders, and until the new leader is known ListOffsets answers
// NOT_LEADER_OR_FOLLOWER or LEADER_NOT_AVAILABLE for its partitions (a
// joiner restoring its changelog exited, though the leaders settled
// seconds later: first listing a topic's bounds, then, in TestIntegrationDrill
// under a loaded machine, the start offsets of the records it reads back).
func listPatiently(ctx context.Context, which string, list func() (kadm.ListedOffsets, error), topics ...string) (kadm.ListedOffsets, error) {
	wait := backoff.Backoff{Min: 100 * time.Millisecond, Max: 2 * time.Second}
	deadline := time.Now().Add(boundsPatience)
	for {
		listed, err := list()
		if err == nil {
			err = listed.Error()
		}
		if err == nil {
			return listed, nil
		}
		err = fmt.Errorf("unable to list %s offsets of %v: %w", which, topics, err)
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, err
		}
		if werr := wait.Wait(ctx); werr != nil {
			return nil, errors.Join(err, werr)
		}
	}
}
