package actor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// weightsWatcher follows the compacted weights topic from its start: at
// start-up it reads up to the end offsets to find the latest published
// version of the policy, then it keeps consuming and swaps every newer
// version into the batching server between two batches, so executors never
// stop. Versions only go up: an older or equal version is ignored.
type weightsWatcher struct {
	cl     *kgo.Client
	topic  string
	policy string
	log    *slog.Logger
	onSwap func(version uint64)
	onBad  func()
}

// latest is a decoded weights record of our policy.
type latest struct {
	onnx    []byte
	version uint64
}

// accept decodes a record and returns it when it is a usable version of our
// policy newer than have.
func (w *weightsWatcher) accept(r *kgo.Record, have uint64, haveAny bool) (*latest, bool) {
	if string(r.Key) != w.policy || len(r.Value) == 0 {
		return nil, false // another policy, or a tombstone
	}
	ev, err := eventspb.DecodeWeights(r.Value)
	if err != nil {
		w.log.Warn("skipping undecodable weights", "offset", r.Offset, "err", err)
		w.onBad()
		return nil, false
	}
	if ev.GetPolicyName() != w.policy || (haveAny && ev.GetVersion() <= have) {
		return nil, false
	}
	if sum := ev.GetOnnxSha256(); sum != "" {
		got := sha256.Sum256(ev.GetOnnx())
		if hex.EncodeToString(got[:]) != sum {
			w.log.Warn("skipping weights with a wrong onnx_sha256", "version", ev.GetVersion(), "offset", r.Offset)
			w.onBad()
			return nil, false
		}
	}
	return &latest{onnx: ev.GetOnnx(), version: ev.GetVersion()}, true
}

// catchUp reads the topic up to its current end (at most timeout) and
// returns the newest version of the policy, or nil when none is published.
func (w *weightsWatcher) catchUp(ctx context.Context, timeout time.Duration) (*latest, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ends, err := kadm.NewClient(w.cl).ListEndOffsets(ctx, w.topic)
	if err != nil {
		return nil, fmt.Errorf("unable to read the end of %s: %w", w.topic, err)
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("unable to read the end of %s: %w", w.topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	var best *latest
	for len(want) > 0 {
		fs := w.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			// The end offset can lie past the last record a consumer
			// sees (a transaction marker): go on with what was read,
			// newer versions arrive through follow anyway.
			w.log.Warn("weights topic not read to its end in time; starting from the newest version read",
				"topic", w.topic, "timeout", timeout, "version", versionOf(best), "found", best != nil)
			return best, nil
		}
		fs.EachError(func(t string, p int32, err error) {
			w.log.Warn("unable to fetch weights", "topic", t, "partition", p, "err", err)
		})
		fs.EachRecord(func(r *kgo.Record) {
			if l, ok := w.accept(r, versionOf(best), best != nil); ok {
				best = l
			}
			if end, ok := want[r.Partition]; ok && r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
	}
	return best, nil
}

func versionOf(l *latest) uint64 {
	if l == nil {
		return 0
	}
	return l.version
}

// follow swaps newer versions into srv until ctx ends.
func (w *weightsWatcher) follow(ctx context.Context, srv *policy.Server, haveAny bool) {
	for {
		fs := w.cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return
		}
		fs.EachError(func(t string, p int32, err error) {
			w.log.Warn("unable to fetch weights", "topic", t, "partition", p, "err", err)
		})
		var next *latest
		have := srv.Version()
		fs.EachRecord(func(r *kgo.Record) {
			if l, ok := w.accept(r, max(have, versionOf(next)), haveAny || next != nil); ok {
				next = l
			}
		})
		if next == nil {
			continue
		}
		if err := srv.Swap(ctx, next.onnx, next.version); err != nil {
			w.log.Error("unable to swap in new weights", "version", next.version, "err", err)
			w.onBad()
			continue
		}
		haveAny = true
		w.onSwap(next.version)
	}
}
