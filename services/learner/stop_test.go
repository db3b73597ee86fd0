package learner

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// StopProducing ends the curriculum's tasks: once it returned, the actors
// taking every queued task no longer makes the curriculum top the queue up.
// The learner's Stop, after it, stops the curriculum again without harm.
func TestStopProducingEndsTasks(t *testing.T) {
	kc := kafkatest.Fake(t, "t.", topics.WithPartitions(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := kafka.NewFactory(&config.Config{InstanceID: "test"}, kc.Seeds, nil)
	cat, cl := kc.Catalog, kc.Admin
	cu, err := newCurriculum(CurriculumConfig{InFlight: 4}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := cu.start(ctx, f, cat, cl, "test", func(err error) { t.Errorf("curriculum failed: %v", err) }); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	tasks := cat.Name(topics.Tasks)
	end := func() int64 {
		t.Helper()
		ends, err := adm.ListEndOffsets(ctx, tasks)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := ends.Lookup(tasks, 0)
		return o.Offset
	}
	// The actors take everything queued, and the curriculum tops it up.
	take := func(at int64) {
		t.Helper()
		var o kadm.Offsets
		o.AddOffset(tasks, 0, at, -1)
		if _, err := adm.CommitOffsets(ctx, cat.Prefix+"actor", o); err != nil {
			t.Fatal(err)
		}
	}
	take(0) // kfake answers GROUP_ID_NOT_FOUND for a group that never committed
	for end() < 4 {
		time.Sleep(50 * time.Millisecond)
	}
	take(end())
	for end() < 8 {
		time.Sleep(50 * time.Millisecond)
	}

	s := &Service{cur: cu}
	if err := s.StopProducing(ctx); err != nil {
		t.Fatal(err)
	}
	published := end()
	take(published)
	time.Sleep(time.Second) // four of the curriculum's 250ms looks at the queue
	if got := end(); got != published {
		t.Fatalf("%d tasks published after StopProducing", got-published)
	}
	if err := cu.stop(ctx); err != nil { // what the learner's Stop does next
		t.Fatalf("stop after StopProducing: %v", err)
	}
}
