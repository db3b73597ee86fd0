// Package weightstopic reads the compacted weights topic: the newest
// published version of a policy, checked against its own sha256. The actor
// follows it to swap models; the learner reads it to continue the version
// sequence after a restart or a takeover. The learner publishes in
// transactions (a fenced learner's version must never be seen), so the
// topic is read committed.
package weightstopic

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
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

// Reader reads one policy's weights from a client consuming the topic from
// its start.
type Reader struct {
	Client *kgo.Client
	Topic  string
	Policy string
	Log    *slog.Logger
	// OnBad is called for every undecodable or corrupt record of the policy.
	OnBad func()
	// Version, when not 0, is the one version wanted (an evaluation of a
	// checkpoint, not of the newest): Accept takes no other.
	Version uint64
}

// Accept decodes r and returns it when it is a usable version of the policy
// newer than have (any version when !haveAny).
func (w *Reader) Accept(r *kgo.Record, have uint64, haveAny bool) (*eventspb.Weights, bool) {
	if r.Attrs.IsControl() || string(r.Key) != w.Policy || len(r.Value) == 0 {
		return nil, false // a transaction marker, another policy, or a tombstone
	}
	ev, err := eventspb.DecodeWeights(r.Value)
	if err != nil {
		w.Log.Warn("skipping undecodable weights", "offset", r.Offset, "err", err)
		w.bad()
		return nil, false
	}
	if ev.GetPolicyName() != w.Policy {
		return nil, false
	}
	if w.Version != 0 && ev.GetVersion() != w.Version || w.Version == 0 && haveAny && ev.GetVersion() <= have {
		return nil, false
	}
	if sum := ev.GetOnnxSha256(); sum != "" {
		got := sha256.Sum256(ev.GetOnnx())
		if hex.EncodeToString(got[:]) != sum {
			w.Log.Warn("skipping weights with a wrong onnx_sha256", "version", ev.GetVersion(), "offset", r.Offset)
			w.bad()
			return nil, false
		}
	}
	return ev, true
}

func (w *Reader) bad() {
	if w.OnBad != nil {
		w.OnBad()
	}
}

// CatchUp reads the topic up to its current committed end (at most
// timeout) and returns the newest version of the policy, or nil when none
// is published. The end is the last stable offset: a transaction still
// open (a learner that was just fenced, before its coordinator aborted it)
// holds nothing a reader may see.
func (w *Reader) CatchUp(ctx context.Context, timeout time.Duration) (*eventspb.Weights, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ends, err := kadm.NewClient(w.Client).ListCommittedOffsets(ctx, w.Topic)
	if err != nil {
		return nil, fmt.Errorf("unable to read the end of %s: %w", w.Topic, err)
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("unable to read the end of %s: %w", w.Topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	var best *eventspb.Weights
	l := &kafka.Loop{Name: "weights catch-up", Poller: w.Client, Log: w.Log,
		Handle: func(_ context.Context, fs kgo.Fetches) error {
			fs.EachRecord(func(r *kgo.Record) {
				if l, ok := w.Accept(r, best.GetVersion(), best != nil); ok {
					best = l
				}
				if end, ok := want[r.Partition]; ok && r.Offset+1 >= end {
					delete(want, r.Partition)
				}
			})
			if len(want) == 0 {
				return kafka.ErrStop
			}
			return nil
		}}
	if len(want) > 0 {
		if err := l.Run(ctx); err != nil {
			return nil, fmt.Errorf("unable to read %s: %w", w.Topic, err)
		}
	}
	if len(want) > 0 {
		// The end offset can lie past the last record a consumer sees (a
		// transaction marker): go on with what was read.
		w.Log.Warn("weights topic not read to its end in time; using the newest version read",
			"topic", w.Topic, "timeout", timeout, "version", best.GetVersion(), "found", best != nil)
	}
	return best, nil
}

// ConsumeOpts reads the weights topic from its start, committed records
// only, with fetch limits above the largest model the topic accepts (64
// MiB). Transaction markers are kept: the topic's committed end lies past
// the last commit marker, and CatchUp sees it was reached only by reading
// the marker (Accept skips them).
func ConsumeOpts(topic string) []kgo.Opt {
	return []kgo.Opt{
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.FetchMaxBytes(80 << 20), kgo.FetchMaxPartitionBytes(80 << 20), kgo.BrokerMaxReadBytes(100 << 20),
	}
}

// Latest reads the newest published version of policy with a client of its
// own (newClient adds seeds and security), or nil when none is published.
func Latest(ctx context.Context, newClient func(...kgo.Opt) (*kgo.Client, error), topic, policy string, log *slog.Logger, onBad func()) (*eventspb.Weights, error) {
	return catchUp(ctx, newClient, &Reader{Topic: topic, Policy: policy, Log: log, OnBad: onBad}, 30*time.Second)
}

// catchUp runs r.CatchUp with a client of its own, closed after.
func catchUp(ctx context.Context, newClient func(...kgo.Opt) (*kgo.Client, error), r *Reader, timeout time.Duration) (*eventspb.Weights, error) {
	cl, err := newClient(ConsumeOpts(r.Topic)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	r.Client = cl
	return r.CatchUp(ctx, timeout)
}

// Version reads version v of policy, or nil when the topic no longer holds
// it: the topic is compacted by policy name, so an older version lasts only
// until its segment rolls (1 GiB, the broker's default) and the cleaner
// runs. A language model's version (its 4 trained blocks) is 26 MB: in the
// 12-07 21:49 lm run, whose newest was v144, v40 was gone by its end: the
// topic held about its last ten versions.
func Version(ctx context.Context, newClient func(...kgo.Opt) (*kgo.Client, error), topic, policy string, v uint64, log *slog.Logger) (*eventspb.Weights, error) {
	return catchUp(ctx, newClient, &Reader{Topic: topic, Policy: policy, Log: log, Version: v}, 60*time.Second)
}
