package actor

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// TestPublisherGivesUpLoudly: an event the broker never takes within the
// delivery bound (here nobody listens at all) is reported as lost, which
// makes the actor fail (Failed), instead of being dropped quietly.
func TestPublisherGivesUpLoudly(t *testing.T) {
	cl, err := kgo.NewClient(kgo.SeedBrokers("127.0.0.1:1"), kgo.RecordDeliveryTimeout(time.Second),
		kgo.DialTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	m, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{failed: make(chan error, 1)}
	p := &publisher{ctx: context.Background(), cl: cl, log: slog.New(slog.DiscardHandler), m: m, c: &counters{},
		producer: "test", obs: "obs", lost: s.lost}
	ev := &eventspb.Telemetry{Envelope: eventspb.NewEnvelope("test"), ActorId: "actor-1"}
	if err := p.send("telemetry", "a", ev); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = p.flush(ctx)
	select {
	case err := <-s.Failed():
		if !errors.Is(err, kgo.ErrRecordTimeout) {
			t.Fatalf("the actor failed with %v, want the delivery timeout", err)
		}
	case <-ctx.Done():
		t.Fatal("an event given up did not fail the actor")
	}
	if p.c.produceErrors.Load() != 1 {
		t.Fatalf("produce errors = %d, want 1", p.c.produceErrors.Load())
	}
}
