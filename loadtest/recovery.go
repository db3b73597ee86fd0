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
//
// When settled is not nil, a partition counts as recovered only once
// settled reports true, and only by advancing past its offset at that
// moment. A killed member's fault settles when the group dropped it
// (Evicted): a transaction it committed just before it died, whose offsets
// appear a little later, is not a recovery. A ClickHouse outage settles
// when the server is back: a batch inserted before the stop and committed
// during it is not one either.
func WatchRecovery(ctx context.Context, adm *kadm.Client, group string, names []string, since time.Time, base topics.GroupLag, interval time.Duration, settled func(context.Context) (bool, error)) Recovery {
	r := Recovery{Group: group, Resumed: -1, Recovered: -1}
	offsets := func(l topics.GroupLag) map[[2]any]int64 {
		m := map[[2]any]int64{}
		for _, p := range l.Partitions {
			m[[2]any{p.Topic, p.Partition}] = p.Committed
		}
		return m
	}
	at, from := offsets(base), offsets(base)
	out := settled == nil
	for {
		if !out {
			if ok, err := settled(ctx); err == nil && ok {
				if lag, err := Offsets(ctx, adm, group, names); err == nil {
					out, from = true, offsets(lag)
				}
			}
		}
		if lag, err := Offsets(ctx, adm, group, names); err == nil {
			now := time.Since(since)
			moved, all := false, out && len(lag.Partitions) > 0
			for _, p := range lag.Partitions {
				k := [2]any{p.Topic, p.Partition}
				before, ok := at[k]
				moved = moved || ok && p.Committed > before || !ok && p.Committed >= 0
				before, ok = from[k]
				advanced := ok && p.Committed > before || !ok && p.Committed >= 0
				idle := ok && p.End <= before // nothing arrived since
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

// Member finds the member of group whose client id starts with
// clientPrefix (the services name their clients <instance id>/<client>)
// and returns its member id ("" when there is none) and how many
// partitions of names it is assigned.
func Member(ctx context.Context, adm *kadm.Client, group, clientPrefix string, names []string) (string, int, error) {
	g, err := describe(ctx, adm, group)
	if err != nil {
		return "", 0, err
	}
	for _, m := range g.Members {
		if !strings.HasPrefix(m.ClientID, clientPrefix) {
			continue
		}
		n := 0
		if c, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range c.Topics {
				if slices.Contains(names, t.Topic) {
					n += len(t.Partitions)
				}
			}
		}
		return m.MemberID, n, nil
	}
	return "", 0, nil
}

// Evicted returns a check for WatchRecovery: true once member is no
// longer in group (its session expired, or the group rebalanced without
// it).
func Evicted(adm *kadm.Client, group, member string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		g, err := describe(ctx, adm, group)
		if err != nil {
			return false, err
		}
		for _, m := range g.Members {
			if m.MemberID == member {
				return false, nil
			}
		}
		return true, nil
	}
}

func describe(ctx context.Context, adm *kadm.Client, group string) (kadm.DescribedGroup, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	groups, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return kadm.DescribedGroup{}, err
	}
	g, err := groups.On(group, nil)
	if err == nil {
		err = g.Err
	}
	return g, err
}
