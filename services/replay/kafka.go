package replay

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Bound is one end of a replay range: an offset (the same for every
// topic-partition; 0 is the start), a time, or the log's end.
type Bound struct {
	Offset int64 // -1: not an offset bound
	Time   time.Time
	End    bool
}

// ParseBound reads "start", "end", an offset, or an RFC 3339 time.
func ParseBound(s string) (Bound, error) {
	switch strings.TrimSpace(s) {
	case "", "start":
		return Bound{Offset: 0}, nil
	case "end":
		return Bound{Offset: -1, End: true}, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return Bound{Offset: n}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Bound{}, fmt.Errorf("invalid bound %q: want start, end, an offset or an RFC 3339 time", s)
	}
	return Bound{Offset: -1, Time: t}, nil
}

func (b Bound) String() string {
	switch {
	case b.End:
		return "end"
	case b.Offset >= 0:
		return strconv.FormatInt(b.Offset, 10)
	}
	return b.Time.UTC().Format(time.RFC3339Nano)
}

// idleEnd is how long a read waits for more records of its range before
// it takes what it read as the whole range.
const idleEnd = 5 * time.Second

// KafkaSource reads the raw topics of a catalog between two bounds.
type KafkaSource struct {
	// NewClient builds a client with the extra options (security and
	// seeds come from the caller's factory).
	NewClient func(opts ...kgo.Opt) (*kgo.Client, error)
	Catalog   *topics.Catalog
	From, To  Bound
}

// inputs are the joiner's input topics in kind order.
func inputs(cat *topics.Catalog) map[string]joiner.Kind {
	return map[string]joiner.Kind{
		cat.Name(topics.Obs): joiner.KindObs, cat.Name(topics.Actions): joiner.KindAction, cat.Name(topics.Rewards): joiner.KindReward,
	}
}

// Records implements Source: it resolves the bounds to offsets per
// topic-partition, then reads each range to its end.
func (k *KafkaSource) Records(ctx context.Context, fn func(joiner.Record) error) error {
	adm, err := k.NewClient()
	if err != nil {
		return err
	}
	defer adm.Close()
	kinds := inputs(k.Catalog)
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	starts, err := resolve(ctx, kadm.NewClient(adm), names, k.From)
	if err != nil {
		return err
	}
	ends, err := resolve(ctx, kadm.NewClient(adm), names, k.To)
	if err != nil {
		return err
	}
	assign := map[string]map[int32]kgo.Offset{}
	remaining := map[string]map[int32]int64{}
	for t, ps := range starts {
		for p, from := range ps {
			to := ends[t][p]
			if to <= from {
				continue
			}
			if assign[t] == nil {
				assign[t], remaining[t] = map[int32]kgo.Offset{}, map[int32]int64{}
			}
			assign[t][p] = kgo.NewOffset().At(from)
			remaining[t][p] = to
		}
	}
	if len(assign) == 0 {
		return nil
	}
	// Read committed, as the joiner reads its inputs: a record of an
	// aborted transaction never reached the joiner, so a replay must not
	// see it either, or the same history would give other transitions.
	cl, err := k.NewClient(kgo.ConsumePartitions(assign), kgo.FetchMaxBytes(64<<20), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return err
	}
	defer cl.Close()
	left := 0
	for _, ps := range remaining {
		left += len(ps)
	}
	// A range that ends on a transaction marker never returns its last
	// offset: when nothing comes for a while, it has been read.
	l := &kafka.Loop{Name: "replay history", Poller: cl, Idle: func() time.Duration { return idleEnd },
		Handle: func(_ context.Context, fs kgo.Fetches) error {
			if fs.NumRecords() == 0 {
				return kafka.ErrStop
			}
			var cbErr error
			fs.EachRecord(func(r *kgo.Record) {
				end, ok := remaining[r.Topic][r.Partition]
				if cbErr != nil || !ok || r.Offset >= end {
					return
				}
				cbErr = fn(joiner.Record{Kind: kinds[r.Topic], Value: r.Value, Source: joiner.Source{
					Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Timestamp: r.Timestamp.UnixNano(),
				}})
				if r.Offset+1 >= end {
					delete(remaining[r.Topic], r.Partition)
					left--
				}
			})
			if cbErr == nil && left == 0 {
				return kafka.ErrStop
			}
			return cbErr
		}}
	if err := l.Run(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("unable to read the history: %w", err)
	}
	return nil
}

// resolve turns a bound into an offset per topic-partition.
func resolve(ctx context.Context, adm *kadm.Client, names []string, b Bound) (map[string]map[int32]int64, error) {
	var (
		listed kadm.ListedOffsets
		err    error
	)
	switch {
	case b.End:
		listed, err = adm.ListEndOffsets(ctx, names...)
	case b.Offset >= 0:
		listed, err = adm.ListStartOffsets(ctx, names...)
	default:
		listed, err = adm.ListOffsetsAfterMilli(ctx, b.Time.UnixMilli(), names...)
	}
	if err != nil {
		return nil, fmt.Errorf("unable to resolve bound %s: %w", b, err)
	}
	if err := listed.Error(); err != nil {
		return nil, fmt.Errorf("unable to resolve bound %s: %w", b, err)
	}
	out := map[string]map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		off := o.Offset
		if !b.End && b.Offset > 0 {
			off = max(off, b.Offset) // an offset bound, not before the log start
		}
		out[o.Topic][o.Partition] = off
	})
	return out, nil
}
