package kafka

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/topics"
)

// ClientFunc builds a client with the caller's seeds, security and logging,
// plus opts.
type ClientFunc func(opts ...kgo.Opt) (*kgo.Client, error)

// GroupLag and PartitionLag are topics' (the one lag reader's types).
type (
	GroupLag     = topics.GroupLag
	PartitionLag = topics.PartitionLag
)

// catchUpPoll is how often WaitCaughtUp reads the group's offsets; a
// partition whose offset did not move for catchUpStall is read to see
// whether anything but transaction markers is left; such a read that gets
// nothing for catchUpReadIdle has nothing committed left to read.
const (
	catchUpPoll     = 200 * time.Millisecond
	catchUpStall    = time.Second
	catchUpReadIdle = 2 * time.Second
)

type partitionKey struct {
	topic     string
	partition int32
}

// WaitCaughtUp waits until group's committed offsets reach the read-committed
// end offsets its topics have when it is called, and returns the group's lag
// at its last look: caught up, or, with ctx's error, how far behind it was
// left. The ends are taken once: the caller stopped what writes the topics
// first, so they are the end of the run, and a target that never moves
// cannot be chased forever.
//
// Caught up is not always committed == end. franz-go commits the offset
// after the last record it consumed, never past a trailing transaction
// marker or aborted records, which a read-committed consumer never sees: on a
// transactional topic a drained group can rest at end-1 or lower. A partition
// counts as caught up when committed >= end, or when a read-committed read of
// [committed, end), control records kept, finds no data record. That read is
// made only for a partition whose offset stopped moving, once per offset.
func WaitCaughtUp(ctx context.Context, newClient ClientFunc, group string, topics []string) (GroupLag, error) {
	cl, err := newClient()
	if err != nil {
		return GroupLag{Group: group}, err
	}
	defer cl.Close()
	c, err := newCatchUp(ctx, newClient, kadm.NewClient(cl), group, topics)
	if err != nil {
		return GroupLag{Group: group}, err
	}
	var lastErr error
	for {
		// A failed look (a coordinator moving) is retried: only ctx ends
		// the wait, and its error names the last failure.
		if lag, err := c.check(ctx); err != nil {
			if ctx.Err() == nil {
				lastErr = err
			}
		} else if lag.CaughtUp() {
			return lag, nil
		}
		select {
		case <-ctx.Done():
			err := fmt.Errorf("unable to catch up group %s: %w", group, context.Cause(ctx))
			if lastErr != nil {
				err = fmt.Errorf("%w (last look: %v)", err, lastErr)
			}
			return c.last, err
		case <-time.After(catchUpPoll):
		}
	}
}

// catchUp follows one group towards fixed end offsets.
type catchUp struct {
	newClient ClientFunc
	adm       *kadm.Client
	group     string
	ends      map[partitionKey]int64
	starts    map[partitionKey]int64
	// moved is when each partition's committed offset last changed, and
	// at what value.
	moved map[partitionKey]stamp
	// empty holds, per partition, a committed offset a read proved to
	// have nothing committed left between it and the end.
	empty map[partitionKey]int64
	// full holds, per partition, a committed offset a read found a data
	// record after: behind for as long as the offset stays there.
	full map[partitionKey]int64
	last GroupLag
}

type stamp struct {
	at     int64
	change time.Time
}

func newCatchUp(ctx context.Context, newClient ClientFunc, adm *kadm.Client, group string, names []string) (*catchUp, error) {
	ends, err := adm.ListCommittedOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("unable to list the end offsets of %v: %w", names, err)
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("unable to list the end offsets of %v: %w", names, err)
	}
	starts, err := adm.ListStartOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("unable to list the start offsets of %v: %w", names, err)
	}
	if err := starts.Error(); err != nil {
		return nil, fmt.Errorf("unable to list the start offsets of %v: %w", names, err)
	}
	c := &catchUp{newClient: newClient, adm: adm, group: group, ends: map[partitionKey]int64{}, starts: map[partitionKey]int64{},
		moved: map[partitionKey]stamp{}, empty: map[partitionKey]int64{}, full: map[partitionKey]int64{}}
	ends.Each(func(o kadm.ListedOffset) { c.ends[partitionKey{o.Topic, o.Partition}] = o.Offset })
	starts.Each(func(o kadm.ListedOffset) { c.starts[partitionKey{o.Topic, o.Partition}] = o.Offset })
	c.last = GroupLag{Group: group}
	for k, end := range c.ends {
		c.last.Partitions = append(c.last.Partitions, PartitionLag{Topic: k.topic, Partition: k.partition, Committed: -1, End: end,
			Behind: max(0, end-c.starts[k])})
	}
	topics.SortLag(c.last.Partitions)
	return c, nil
}

// check reads the group's committed offsets and compares them with the ends.
func (c *catchUp) check(ctx context.Context) (GroupLag, error) {
	// A group no member ever committed for starts at the log start.
	offs, err := topics.CommittedOffsets(ctx, c.adm, c.group)
	if err != nil {
		return GroupLag{}, err
	}
	now := time.Now()
	lag := GroupLag{Group: c.group}
	stalled := map[partitionKey]int64{} // partition -> where to read from
	for k, end := range c.ends {
		committed := int64(-1)
		if o, ok := offs.Lookup(k.topic, k.partition); ok && o.Err == nil && o.At >= 0 {
			committed = o.At
		}
		pos := committed
		if pos < 0 {
			pos = c.starts[k]
		}
		if s, ok := c.moved[k]; !ok || s.at != committed {
			c.moved[k] = stamp{at: committed, change: now}
		}
		behind := max(0, end-pos)
		if behind > 0 {
			if at, ok := c.empty[k]; ok && at == committed {
				behind = 0
			} else if at, ok := c.full[k]; (!ok || at != committed) && now.Sub(c.moved[k].change) >= catchUpStall {
				stalled[k] = pos
			}
		}
		lag.Partitions = append(lag.Partitions, PartitionLag{Topic: k.topic, Partition: k.partition, Committed: committed, End: end, Behind: behind})
	}
	if len(stalled) > 0 {
		empty, err := c.readEmpty(ctx, stalled)
		if err != nil {
			return GroupLag{}, err
		}
		for i, p := range lag.Partitions {
			k := partitionKey{p.Topic, p.Partition}
			if _, ok := stalled[k]; !ok {
				continue
			}
			if empty[k] {
				c.empty[k] = p.Committed
				lag.Partitions[i].Behind = 0
			} else {
				c.full[k] = p.Committed
			}
		}
	}
	topics.SortLag(lag.Partitions)
	c.last = lag
	return lag, nil
}

// readEmpty reads each partition from its offset towards its end, read
// committed with control records kept, and reports the partitions where no
// data record is left before the end: only transaction markers and aborted
// records were there.
func (c *catchUp) readEmpty(ctx context.Context, from map[partitionKey]int64) (map[partitionKey]bool, error) {
	assign := map[string]map[int32]kgo.Offset{}
	for k, at := range from {
		if assign[k.topic] == nil {
			assign[k.topic] = map[int32]kgo.Offset{}
		}
		assign[k.topic][k.partition] = kgo.NewOffset().At(at)
	}
	cl, err := c.newClient(kgo.ConsumePartitions(assign), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	open := map[partitionKey]bool{}
	for k := range from {
		open[k] = true
	}
	out := map[partitionKey]bool{}
	l := &Loop{Name: "catch-up read", Poller: cl, Idle: func() time.Duration { return catchUpReadIdle },
		Handle: func(_ context.Context, fs kgo.Fetches) error {
			if fs.NumRecords() == 0 {
				// Nothing came: the range holds only aborted records whose
				// markers lie past the end, so nothing committed is left.
				for k := range open {
					out[k] = true
				}
				return ErrStop
			}
			fs.EachRecord(func(r *kgo.Record) {
				k := partitionKey{r.Topic, r.Partition}
				if !open[k] {
					return
				}
				end := c.ends[k]
				switch {
				case r.Offset < end && !r.Attrs.IsControl():
					out[k] = false // a committed record the group has not consumed
				case r.Offset >= end-1:
					out[k] = true // reached the end through markers only
				default:
					return // a marker before the end: read on
				}
				delete(open, k)
			})
			if len(open) == 0 {
				return ErrStop
			}
			return nil
		}}
	if err := l.Run(ctx); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
