package kafka

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
)

// loopFixture is a kfake cluster with one topic of n records and a consumer
// of it. setup (nil: none) runs before the consumer exists: a client
// consuming topics fetches from its start, so a fetch control installed
// after it may come after the records were fetched.
type loopFixture struct {
	c  *kafkatest.Cluster
	cl *kgo.Client
}

const loopTopic = "loop"

func newLoopFixture(t *testing.T, n int, setup func(*loopFixture), opts ...kgo.Opt) *loopFixture {
	t.Helper()
	c := kafkatest.StartFake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := c.Client(t)
	if _, err := kadm.NewClient(adm).CreateTopic(ctx, 1, 1, nil, loopTopic); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := adm.ProduceSync(ctx, &kgo.Record{Topic: loopTopic, Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	f := &loopFixture{c: c}
	if setup != nil {
		setup(f)
	}
	opts = append([]kgo.Opt{kgo.ConsumeTopics(loopTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)
	f.cl = c.Client(t, opts...)
	return f
}

// failFetches answers the next n fetches with code on every partition.
func (f *loopFixture) failFetches(n int32, code int16) *atomic.Int32 {
	var answered atomic.Int32
	f.c.Fake.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if answered.Load() >= n {
			f.c.Fake.DropControl()
			return nil, nil, false
		}
		f.c.Fake.KeepControl()
		answered.Add(1)
		fr := req.(*kmsg.FetchRequest)
		resp := fr.ResponseKind().(*kmsg.FetchResponse)
		resp.SessionID = 0
		for _, rt := range fr.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, code
				sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	return &answered
}

// collect returns a Handle that counts records and stops at want.
func collect(got *atomic.Int32, want int32) func(context.Context, kgo.Fetches) error {
	return func(_ context.Context, fs kgo.Fetches) error {
		if fs.Errors() != nil {
			return errors.New("the loop handed over an error")
		}
		if got.Add(int32(fs.NumRecords())) >= want {
			return ErrStop
		}
		return nil
	}
}

func fastBackoff() *backoff.Backoff {
	return &backoff.Backoff{Min: time.Millisecond, Max: 5 * time.Millisecond}
}

// TestLoopRetryableError: a retryable fetch error is logged and retried; the
// records come through once the broker answers again, and ErrStop ends the
// loop without an error.
func TestLoopRetryableError(t *testing.T) {
	// Retryable errors reach the poll only when the client keeps them; by
	// default franz-go retries them itself, unseen.
	var answered *atomic.Int32
	f := newLoopFixture(t, 5, func(f *loopFixture) { answered = f.failFetches(3, kerr.NotLeaderForPartition.Code) },
		kgo.KeepRetryableFetchErrors())
	var got, retries atomic.Int32
	l := &Loop{Name: "test", Poller: f.cl, Handle: collect(&got, 5), Backoff: fastBackoff(),
		OnRetry: func(string, int32, error) { retries.Add(1) }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Run(ctx); err != nil {
		t.Fatalf("Run = %v, want nil after ErrStop", err)
	}
	if got.Load() != 5 {
		t.Fatalf("handed over %d records, want 5", got.Load())
	}
	if answered.Load() != 3 || retries.Load() == 0 {
		t.Fatalf("%d failed fetches answered, %d retries seen: want 3 and at least one", answered.Load(), retries.Load())
	}
}

// TestLoopFatalError: a fetch error that retrying cannot fix ends the loop
// with a *FetchError naming the partition, and nothing is handed over.
func TestLoopFatalError(t *testing.T) {
	f := newLoopFixture(t, 5, func(f *loopFixture) { f.failFetches(1000, kerr.TopicAuthorizationFailed.Code) })
	var got atomic.Int32
	l := &Loop{Name: "test", Poller: f.cl, Handle: collect(&got, 5), Backoff: fastBackoff()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := l.Run(ctx)
	var fe *FetchError
	if !errors.As(err, &fe) || fe.Topic != loopTopic || fe.Partition != 0 || !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("Run = %v, want a *FetchError for %s[0] wrapping TOPIC_AUTHORIZATION_FAILED", err, loopTopic)
	}
	if got.Load() != 0 {
		t.Fatalf("handed over %d records with a fatal error", got.Load())
	}
	if ctx.Err() != nil {
		t.Fatal("the loop ran until the test's deadline instead of failing")
	}
}

// TestLoopClosedClient: closing the client ends the loop without an error.
func TestLoopClosedClient(t *testing.T) {
	f := newLoopFixture(t, 0, nil)
	done := make(chan error, 1)
	polling := make(chan struct{})
	var once atomic.Bool
	l := &Loop{Name: "test", Poller: f.cl, Idle: func() time.Duration {
		if once.CompareAndSwap(false, true) {
			close(polling)
		}
		return time.Second
	}}
	go func() { done <- l.Run(context.Background()) }()
	<-polling
	f.cl.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v after the client closed, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the loop did not end when its client closed")
	}
}

// TestLoopStopDuringPoll: canceling the context while a poll waits ends the
// loop without an error and without handing anything over, so nothing is
// marked for commit; the records stay for the group's next owner.
func TestLoopStopDuringPoll(t *testing.T) {
	f := newLoopFixture(t, 0, nil, kgo.ConsumerGroup("g"), kgo.DisableAutoCommit())
	ctx, cancel := context.WithCancel(context.Background())
	var handled atomic.Int32
	l := &Loop{Name: "test", Poller: f.cl, Handle: func(context.Context, kgo.Fetches) error {
		handled.Add(1)
		return nil
	}}
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	time.Sleep(200 * time.Millisecond) // the poll is waiting: the topic is empty
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v after stop, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the loop did not end when its context ended")
	}
	if handled.Load() != 0 {
		t.Fatalf("Handle ran %d times for an empty topic", handled.Load())
	}
}

// TestLoopHandleError: Handle's own error ends the loop and comes back
// unchanged.
func TestLoopHandleError(t *testing.T) {
	f := newLoopFixture(t, 1, nil)
	boom := errors.New("boom")
	l := &Loop{Name: "test", Poller: f.cl, Handle: func(context.Context, kgo.Fetches) error { return boom }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Run(ctx); !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want Handle's error", err)
	}
}
