package actor

import (
	"context"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/weightstopic"
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

func (w *weightsWatcher) reader() *weightstopic.Reader {
	return &weightstopic.Reader{Client: w.cl, Topic: w.topic, Policy: w.policy, Log: w.log, OnBad: w.onBad}
}

// accept decodes a record and returns it when it is a usable version of our
// policy newer than have.
func (w *weightsWatcher) accept(r *kgo.Record, have uint64, haveAny bool) (*latest, bool) {
	ev, ok := w.reader().Accept(r, have, haveAny)
	if !ok {
		return nil, false
	}
	return &latest{onnx: ev.GetOnnx(), version: ev.GetVersion()}, true
}

// catchUp reads the topic up to its current end (at most timeout) and
// returns the newest version of the policy, or nil when none is published.
func (w *weightsWatcher) catchUp(ctx context.Context, timeout time.Duration) (*latest, error) {
	ev, err := w.reader().CatchUp(ctx, timeout)
	if err != nil || ev == nil {
		return nil, err
	}
	return &latest{onnx: ev.GetOnnx(), version: ev.GetVersion()}, nil
}

func versionOf(l *latest) uint64 {
	if l == nil {
		return 0
	}
	return l.version
}

// follow swaps newer versions into srv until ctx ends.
func (w *weightsWatcher) follow(ctx context.Context, srv Policy, haveAny bool) error {
	l := &kafka.Loop{Name: "actor weights", Poller: w.cl, Log: w.log,
		Handle: func(ctx context.Context, fs kgo.Fetches) error {
			var next *latest
			have := srv.Version()
			fs.EachRecord(func(r *kgo.Record) {
				if l, ok := w.accept(r, max(have, versionOf(next)), haveAny || next != nil); ok {
					next = l
				}
			})
			if next == nil {
				return nil
			}
			if err := srv.Swap(ctx, next.onnx, next.version); err != nil {
				if ctx.Err() != nil {
					// Stopping: the learner's final version arrived as the
					// executors ended; there is nothing left to serve it to.
					return kafka.ErrStop
				}
				w.log.Error("unable to swap in new weights", "version", next.version, "err", err)
				w.onBad()
				return nil
			}
			haveAny = true
			w.onSwap(next.version)
			return nil
		}}
	return l.Run(ctx)
}
