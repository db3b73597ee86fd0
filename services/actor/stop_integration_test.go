package actor

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestIntegrationStopProducingThenStop: after StopProducing returns, every
// event the actor produced is on the broker (flushed, the aborted ends of
// the episodes in flight included) and nothing more is produced, and the
// browsers still answer; Stop afterwards, and again, works.
func TestIntegrationStopProducingThenStop(t *testing.T) {
	srv := startWebenv(t, "none")
	k := newKafkaEnv(t, srv.URL())
	a := k.startActor(t, WithExecutors(2), WithBrowsers(1),
		WithTaskGrace(time.Second), WithMaxSteps(6), WithTelemetryWindow(time.Second), WithFamilies("click-button", "type-text"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	waitUntil(t, 3*time.Minute, "3 episodes", func() bool { return a.Stats().Episodes >= 3 })

	if err := a.StopProducing(ctx); err != nil {
		t.Fatal(err)
	}
	st := a.Stats()
	adm := kadm.NewClient(k.admin)
	onBroker := func() int64 {
		t.Helper()
		ends, err := adm.ListEndOffsets(ctx, k.catalog.Name(topics.Obs), k.catalog.Name(topics.Actions),
			k.catalog.Name(topics.Rewards), k.catalog.Name(topics.Telemetry))
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
		return n
	}
	if got := onBroker(); got != int64(st.Produced) || st.ProduceErrors != 0 {
		t.Fatalf("%d records on the broker after StopProducing, the actor produced %d (%d errors)", got, st.Produced, st.ProduceErrors)
	}
	if err := a.Healthy(ctx); err != nil {
		t.Fatalf("browsers gone before Stop: %v", err)
	}
	time.Sleep(2 * time.Second) // longer than the telemetry window
	if got, after := onBroker(), a.Stats(); got != int64(st.Produced) || after.Produced != st.Produced || after.Steps != st.Steps {
		t.Fatalf("produced after StopProducing: %d records on the broker, %d produced (were %d), %d steps (were %d)",
			got, after.Produced, st.Produced, after.Steps, st.Steps)
	}
	if err := a.StopProducing(ctx); err != nil {
		t.Fatalf("second StopProducing: %v", err)
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	t.Logf("stats %+v", a.Stats())
}
