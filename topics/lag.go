package topics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// PartitionLag is where a consumer group stands on one partition.
type PartitionLag struct {
	Topic     string
	Partition int32
	// Committed is the group's committed offset, -1 when it has none.
	Committed int64
	// End is the end offset the group has to reach: the log end in
	// ReadLag, the read-committed end (last stable offset) taken once in
	// the services' drain (kafka.WaitCaughtUp).
	End int64
	// Behind is End minus the group's position (its committed offset, or
	// the log start when it has none): at most this many records are left,
	// fewer when transaction markers or aborted records are among them. 0
	// once caught up.
	Behind int64
}

// GroupLag is a consumer group's position on some topics.
type GroupLag struct {
	Group string
	// Partitions holds every partition of the topics, by topic and
	// partition.
	Partitions []PartitionLag
}

// Behind sums the partitions still behind and the offsets they are behind.
func (g GroupLag) Behind() (records int64, partitions int) {
	for _, p := range g.Partitions {
		if p.Behind > 0 {
			records += p.Behind
			partitions++
		}
	}
	return records, partitions
}

// CaughtUp reports whether no partition is behind.
func (g GroupLag) CaughtUp() bool {
	_, n := g.Behind()
	return n == 0
}

// SortLag orders partitions by topic and partition.
func SortLag(ps []PartitionLag) {
	slices.SortFunc(ps, func(a, b PartitionLag) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
}

// CommittedOffsets fetches group's committed offsets; a group that never
// committed (kfake answers GROUP_ID_NOT_FOUND, Kafka no offsets) has none.
func CommittedOffsets(ctx context.Context, adm *kadm.Client, group string) (kadm.OffsetResponses, error) {
	offs, err := adm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return kadm.OffsetResponses{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("unable to fetch the offsets of group %s: %w", group, err)
	}
	return offs, nil
}

// ReadLag reads group's lag on names once: each partition's log end offset
// minus the group's committed offset, or minus the log start when the
// group has none. It is the one lag reader of the plain (not transactional)
// topics: the joiner's stall watch on its inputs, the curriculum's task
// queue (the actors' lag on tasks), the load tests' wait for the joiner.
// kadm's Lag describes groups and their members (the recorder's lag
// snapshots, the progress line); the drain of a transactional topic is
// kafka.WaitCaughtUp.
func ReadLag(ctx context.Context, adm *kadm.Client, group string, names ...string) (GroupLag, error) {
	lag := GroupLag{Group: group}
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return lag, fmt.Errorf("unable to list the end offsets of %v: %w", names, err)
	}
	committed, err := CommittedOffsets(ctx, adm, group)
	if err != nil {
		return lag, err
	}
	var starts kadm.ListedOffsets // read only when some partition has no commit
	for _, byPartition := range ends {
		for _, o := range byPartition {
			p := PartitionLag{Topic: o.Topic, Partition: o.Partition, Committed: -1, End: o.Offset}
			if c, ok := committed.Lookup(o.Topic, o.Partition); ok && c.Err == nil && c.At >= 0 {
				p.Committed = c.At
			}
			pos := p.Committed
			if pos < 0 && o.Offset > 0 {
				if starts == nil {
					if starts, err = adm.ListStartOffsets(ctx, names...); err == nil {
						err = starts.Error()
					}
					if err != nil {
						return lag, fmt.Errorf("unable to list the start offsets of %v: %w", names, err)
					}
				}
				s, _ := starts.Lookup(o.Topic, o.Partition)
				pos = s.Offset
			}
			p.Behind = max(0, o.Offset-max(pos, 0))
			lag.Partitions = append(lag.Partitions, p)
		}
	}
	SortLag(lag.Partitions)
	return lag, nil
}
