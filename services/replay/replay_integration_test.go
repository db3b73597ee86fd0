package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/loadtest"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/services/replay"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// joined is a replay's output: value bytes by transition event id.
type joined struct {
	res   replay.Result
	byID  map[string][]byte
	steps map[string]*eventspb.Transition // by episode/step
}

func run(ctx context.Context, t *testing.T, src replay.Source, set joiner.Settings) joined {
	t.Helper()
	j := joined{byID: map[string][]byte{}, steps: map[string]*eventspb.Transition{}}
	res, err := replay.Join(ctx, src, set, func(_ int32, key, value []byte) error {
		tr, err := eventspb.DecodeTransition(value)
		if err != nil {
			return err
		}
		if _, dup := j.byID[tr.GetEnvelope().GetEventId()]; dup {
			return fmt.Errorf("transition %s emitted twice", tr.GetEnvelope().GetEventId())
		}
		j.byID[tr.GetEnvelope().GetEventId()] = value
		j.steps[fmt.Sprintf("%s/%d", tr.GetEpisodeId(), tr.GetStep())] = tr
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	j.res = res
	return j
}

func same(a, b joined) error {
	if len(a.byID) != len(b.byID) {
		return fmt.Errorf("%d vs %d transitions", len(a.byID), len(b.byID))
	}
	for id, v := range a.byID {
		if !bytes.Equal(v, b.byID[id]) {
			return fmt.Errorf("transition %s differs", id)
		}
	}
	return nil
}

// TestIntegrationReplayDeterministicAndFromClickHouse records a history
// (synthetic actor traffic with reordering, duplicates and malformed
// records) on the real broker, archives it in the real ClickHouse the way
// the recorder does, and replay-joins it: twice from Kafka (identical),
// from ClickHouse (identical to Kafka), and with a stricter stability
// threshold (exactly the transitions touching a frame below it are gone).
func TestIntegrationReplayDeterministicAndFromClickHouse(t *testing.T) {
	kc := kafkatest.Real(t, "r", topics.WithPartitions(3))
	cat := kc.Catalog
	conn := analyticstest.Open(t)
	db := testenv.Unique(t, "rp")
	t.Cleanup(func() { analyticstest.Drop(t, conn, db) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cl := kc.Client(t, kgo.ProducerBatchMaxBytes(16<<20))
	load := loadtest.DefaultConfig(20000)
	exp, err := loadtest.Generate(ctx, cl, cat, load)
	if err != nil {
		t.Fatal(err)
	}
	newClient := kc.NewClient
	kafkaSrc := &replay.KafkaSource{NewClient: newClient, Catalog: cat, From: replay.Bound{Offset: 0}, To: replay.Bound{Offset: -1, End: true}}

	// Archive: every input record through analytics.Rows, the recorder's
	// own path, into a fresh database.
	if _, err := analytics.Migrate(ctx, conn, db); err != nil {
		t.Fatal(err)
	}
	rows := analytics.NewRows()
	archived := 0
	// The observations by where their records are: a transition names its
	// next state by reference.
	type at struct {
		topic     string
		partition int32
		offset    int64
	}
	obsAt := map[at]*eventspb.Observation{}
	err = kafkaSrc.Records(ctx, func(r joiner.Record) error {
		if r.Kind == joiner.KindObs {
			if o, err := eventspb.DecodeObservation(r.Value); err == nil {
				obsAt[at{r.Source.Topic, r.Source.Partition, r.Source.Offset}] = o
			}
		}
		topic := map[joiner.Kind]string{joiner.KindObs: topics.Obs, joiner.KindAction: topics.Actions, joiner.KindReward: topics.Rewards}[r.Kind]
		_ = rows.Add(topic, &analytics.Record{Topic: r.Source.Topic, Partition: r.Source.Partition, Offset: r.Source.Offset,
			Key: r.Source.Key, Value: r.Value, Timestamp: time.Unix(0, r.Source.Timestamp), RecordedAt: time.Now()})
		archived++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rows.Insert(ctx, conn, db); err != nil {
		t.Fatal(err)
	}
	t.Logf("history: %d records on Kafka, archived in ClickHouse %s.event_log", archived, db)

	set := joiner.DefaultSettings()
	first := run(ctx, t, kafkaSrc, set)
	second := run(ctx, t, kafkaSrc, set)
	if err := same(first, second); err != nil {
		t.Fatalf("two replays of the same history differ: %v", err)
	}
	if want := len(exp.Transitions); len(first.byID) != want {
		t.Errorf("replay built %d transitions; the generator expects %d", len(first.byID), want)
	}
	t.Logf("replay from Kafka twice: %d transitions each, identical byte for byte; dropped %v, dead letters %v",
		len(first.byID), first.res.Dropped, first.res.DeadLetters)

	chSrc := &replay.ClickHouseSource{Conn: conn, Database: db, Catalog: cat, From: replay.Bound{Offset: 0}, To: replay.Bound{Offset: -1, End: true}}
	fromCH := run(ctx, t, chSrc, set)
	if err := same(first, fromCH); err != nil {
		t.Fatalf("replay from ClickHouse differs from replay from Kafka: %v", err)
	}
	t.Logf("replay from ClickHouse: %d transitions, identical to Kafka's", len(fromCH.byID))

	strictSet := set
	strictSet.MinStability = 0.8
	strict := run(ctx, t, kafkaSrc, strictSet)
	ok := func(o *eventspb.Observation) bool {
		return o == nil || o.GetTerminal() || o.GetStabilityScore() >= strictSet.MinStability
	}
	want := 0
	for key, tr := range first.steps {
		_, kept := strict.steps[key]
		var next *eventspb.Observation
		if tr.GetNextObsEventId() != "" {
			next = obsAt[at{tr.GetNextObsTopic(), tr.GetNextObsPartition(), tr.GetNextObsOffset()}]
			if next.GetEnvelope().GetEventId() != tr.GetNextObsEventId() {
				t.Fatalf("%s: next state %s referred to at %s[%d]@%d, which holds %q", key, tr.GetNextObsEventId(),
					tr.GetNextObsTopic(), tr.GetNextObsPartition(), tr.GetNextObsOffset(), next.GetEnvelope().GetEventId())
			}
		}
		explained := ok(tr.GetObs()) && ok(next)
		if explained {
			want++
		}
		if kept != explained {
			t.Errorf("%s: kept %v with stricter stability, but its frames' scores %v/%v say %v", key, kept,
				tr.GetObs().GetStabilityScore(), next.GetStabilityScore(), explained)
		}
	}
	if len(strict.steps) != want || want >= len(first.steps) {
		t.Errorf("strict replay kept %d transitions, want %d of %d", len(strict.steps), want, len(first.steps))
	}
	t.Logf("min stability 0.8: %d of %d transitions kept, exactly those whose state and next state score >= 0.8; dropped %v",
		len(strict.steps), len(first.steps), strict.res.Dropped)
}
