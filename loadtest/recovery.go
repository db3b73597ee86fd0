package loadtest

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Recovery is how long a consumer group took to make progress again after
// a fault, both measured from the fault.
type Recovery struct {
	Group string
	// Resumed is when the group's committed offsets first advanced (on any
	// partition: a surviving member's counts); Recovered when every
	// partition had advanced past its committed offset at the fault (the
	// killed member's partitions included), or had received nothing to
	// consume since.
	// Each is -1 until reached.
	Resumed, Recovered time.Duration
}

// OK: the group recovered.
func (r Recovery) OK() bool { return r.Recovered >= 0 }

// Offsets reads group's committed offsets and ends on names (plain topics:
// the inputs, where committed == end means caught up), giving up after 5 s.
func Offsets(ctx context.Context, adm *kadm.Client, group string, names []string) (topics.GroupLag, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return topics.ReadLag(ctx, adm, group, names...)
}

// WatchRecovery polls group on names every interval from the fault at
// since, against its offsets at the fault (base), until it recovered or
// ctx ends; failed looks (the broker away) are retried.
func WatchRecovery(ctx context.Context, adm *kadm.Client, group string, names []string, since time.Time, base topics.GroupLag, interval time.Duration) Recovery {
	r := Recovery{Group: group, Resumed: -1, Recovered: -1}
	at := map[[2]any]int64{}
	for _, p := range base.Partitions {
		at[[2]any{p.Topic, p.Partition}] = p.Committed
	}
	for {
		if lag, err := Offsets(ctx, adm, group, names); err == nil {
			now := time.Since(since)
			moved, all := false, len(lag.Partitions) > 0
			for _, p := range lag.Partitions {
				before, ok := at[[2]any{p.Topic, p.Partition}]
				advanced := ok && p.Committed > before || !ok && p.Committed >= 0
				moved = moved || advanced
				idle := ok && p.End <= before // nothing arrived since the fault
				all = all && (advanced || idle)
			}
			if moved && r.Resumed < 0 {
				r.Resumed = now
			}
			if all {
				if r.Resumed < 0 {
					r.Resumed = now // caught up without a commit: nothing was left to do
				}
				r.Recovered = now
				return r
			}
		}
		select {
		case <-ctx.Done():
			return r
		case <-time.After(interval):
		}
	}
}

// MemberPartitions counts the partitions of names that group's members
// whose client id starts with clientPrefix are assigned (the services name
// their clients <instance id>/<client>).
func MemberPartitions(ctx context.Context, adm *kadm.Client, group, clientPrefix string, names []string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	groups, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return 0, err
	}
	g, err := groups.On(group, nil)
	if err != nil {
		return 0, err
	}
	if g.Err != nil {
		return 0, g.Err
	}
	n := 0
	for _, m := range g.Members {
		c, ok := m.Assigned.AsConsumer()
		if !ok || !strings.HasPrefix(m.ClientID, clientPrefix) {
			continue
		}
		for _, t := range c.Topics {
			if slices.Contains(names, t.Topic) {
				n += len(t.Partitions)
			}
		}
	}
	return n, nil
}
