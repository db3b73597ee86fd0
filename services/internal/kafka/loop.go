package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
)

// Poller is what a Loop polls: a *kgo.Client or a *kgo.GroupTransactSession.
type Poller interface {
	PollRecords(ctx context.Context, maxPollRecords int) kgo.Fetches
	AllowRebalance()
}

// ErrStop, returned by a Loop's Handle, ends the loop without an error: a
// bounded read that reached its end.
var ErrStop = errors.New("stop the loop")

// FetchError is a fetch that failed for good: the loop that saw it stops and
// returns it, and the service fails.
type FetchError struct {
	Loop      string
	Topic     string
	Partition int32
	Err       error
}

func (e *FetchError) Error() string {
	return fmt.Sprintf("unable to fetch %s[%d] (%s): %v", e.Topic, e.Partition, e.Loop, e.Err)
}

func (e *FetchError) Unwrap() error { return e.Err }

// Loop is the one consume loop of the project: poll, hand the records over,
// repeat, with one policy for what can go wrong.
//
//   - ctx ends during a poll (stop): Run returns nil; records of that poll
//     are not handed over, and not committed, so the group's next owner reads
//     them.
//   - the client is closed: Run returns nil.
//   - a retryable fetch error (Retryable: a broker restarts, a leader moves)
//     is logged; the records of the other partitions are handed over, then
//     the loop backs off (Backoff) and polls again. franz-go keeps retrying
//     the partition meanwhile.
//   - data loss (kgo.ErrDataLoss) is logged as an error; franz-go has already
//     reset the partition to its last valid offset, so the loop goes on.
//   - any other fetch error is fatal: Run returns a *FetchError naming the
//     loop, topic and partition, and the records of that poll are not handed
//     over.
//   - Handle's error ends the loop: ErrStop with nil, any other unchanged.
//
// Committing is Handle's business (MarkCommitRecords, a transaction's End):
// the loop never commits, so what it has not handed over stays uncommitted.
type Loop struct {
	// Name names the loop in logs and errors ("learner transitions").
	Name string
	// Poller is polled; it is not closed by the loop.
	Poller Poller
	// Max caps the records of one poll; 0 takes what is buffered.
	Max int
	// Idle, when set, bounds one poll: a poll with nothing to return for
	// Idle() calls Handle with no records, for loops that flush on a timer or
	// end when a range goes quiet. Unset, a poll waits for records or stop,
	// and Handle only ever sees records.
	Idle func() time.Duration
	// AllowRebalance calls Poller.AllowRebalance after each Handle and on
	// stop, for clients built with kgo.BlockRebalanceOnPoll that do not
	// decide themselves when to let a rebalance through. Default false.
	AllowRebalance bool
	// Handle processes one poll's records (fs holds no errors). Default: the
	// records are dropped.
	Handle func(ctx context.Context, fs kgo.Fetches) error
	// Backoff is the wait after a retryable error; default 100ms doubling to
	// 5s, jittered.
	Backoff *backoff.Backoff
	// Log gets the retried and data-loss errors; default slog.Default().
	Log *slog.Logger
	// OnRetry, when set, is told of every retried fetch error (a metric).
	OnRetry func(topic string, partition int32, err error)
}

// Run polls until ctx ends, the client closes, a fatal fetch error or
// Handle's error.
func (l *Loop) Run(ctx context.Context) error {
	log := l.Log
	if log == nil {
		log = slog.Default()
	}
	b := l.Backoff
	if b == nil {
		b = &backoff.Backoff{Min: 100 * time.Millisecond, Max: 5 * time.Second, Jitter: true}
	}
	allow := func() {
		if l.AllowRebalance {
			l.Poller.AllowRebalance()
		}
	}
	for {
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if l.Idle != nil {
			pctx, cancel = context.WithTimeout(ctx, l.Idle())
		}
		fs := l.Poller.PollRecords(pctx, l.Max)
		idled := pctx.Err() != nil
		cancel()
		if ctx.Err() != nil || fs.IsClientClosed() {
			allow()
			return nil
		}
		var (
			fatal   error
			retried bool
		)
		kept := fs[:0:0]
		for _, f := range fs {
			for _, t := range f.Topics {
				for _, p := range t.Partitions {
					if p.Err == nil {
						continue
					}
					var (
						loss    *kgo.ErrDataLoss
						session *kgo.ErrGroupSession
						eof     *kgo.ErrFirstReadEOF
					)
					switch {
					case errors.Is(p.Err, context.DeadlineExceeded), errors.Is(p.Err, context.Canceled):
						// The Idle bound of this poll, not a failure.
					case errors.As(p.Err, &loss):
						log.Error("records lost on the broker; consuming goes on from where the log is valid",
							"loop", l.Name, "topic", t.Topic, "partition", p.Partition, "err", p.Err)
					case Retryable(p.Err), errors.As(p.Err, &session), errors.As(p.Err, &eof):
						// A member out of its group rejoins by itself; a
						// connection cut on its first read is a broker
						// going away.
						retried = true
						log.Warn("unable to fetch; retrying", "loop", l.Name, "topic", t.Topic, "partition", p.Partition, "err", p.Err)
						if l.OnRetry != nil {
							l.OnRetry(t.Topic, p.Partition, p.Err)
						}
					case fatal == nil:
						fatal = &FetchError{Loop: l.Name, Topic: t.Topic, Partition: p.Partition, Err: p.Err}
					}
				}
			}
			kept = append(kept, withoutErrors(f))
		}
		if fatal != nil {
			// Nothing of this poll is handed over or committed: the
			// service fails and its restart reads it again.
			allow()
			return fatal
		}
		var err error
		// A poll that only failed is not handed over; one that came back
		// empty after Idle is.
		if l.Handle != nil && (kept.NumRecords() > 0 || idled) {
			err = l.Handle(ctx, kept)
		}
		allow()
		switch {
		case errors.Is(err, ErrStop):
			return nil
		case err != nil:
			return err
		}
		if !retried {
			b.Reset()
			continue
		}
		if b.Wait(ctx) != nil {
			allow()
			return nil
		}
	}
}

// withoutErrors is f with its errors taken out (the loop has dealt with
// them) and its records kept: franz-go does not return a record twice, so a
// record that came with an error is handed over all the same.
func withoutErrors(f kgo.Fetch) kgo.Fetch {
	out := kgo.Fetch{Topics: make([]kgo.FetchTopic, 0, len(f.Topics))}
	for _, t := range f.Topics {
		ot := kgo.FetchTopic{Topic: t.Topic, TopicID: t.TopicID}
		for _, p := range t.Partitions {
			if p.Err != nil {
				if len(p.Records) == 0 {
					continue
				}
				p.Err = nil
			}
			ot.Partitions = append(ot.Partitions, p)
		}
		if len(ot.Partitions) > 0 {
			out.Topics = append(out.Topics, ot)
		}
	}
	return out
}
