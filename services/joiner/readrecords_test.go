package joiner_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// produceAlternating writes values v0..v(n-1) to partitions 0 and 1 in
// turn: partition 0 holds v0 v2 ... at offsets 0 1 ..., partition 1 v1 v3 ....
func produceAlternating(ctx context.Context, t *testing.T, kc *kafkatest.Cluster, topic string, n int) {
	t.Helper()
	prod := kc.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range n {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: int32(i % 2), Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadRecordsRidesOutMovingLeaders: during a broker fault a client's
// ListOffsets can fail whole (TestIntegrationDrill's joiner exited on
// "request ListOffsets has 1 separate shard errors, first: unable to dial
// ... connection refused": its metadata still named the dead broker); a
// restore reading its records back asks again instead of failing the
// joiner. Here the broker drops the first ListOffsets requests and the
// client gives up at once (no retries of its own), so only ReadRecords'
// patience can get the records back.
func TestReadRecordsRidesOutMovingLeaders(t *testing.T) {
	kc := kafkatest.Fake(t, "moving.", topics.WithPartitions(2))
	topic := kc.Catalog.Name(topics.Obs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	produceAlternating(ctx, t, kc, topic, 4)
	var refused atomic.Int32
	kc.Fake.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kc.Fake.KeepControl()
		if refused.Load() >= 3 {
			return nil, nil, false
		}
		refused.Add(1)
		return nil, errors.New("the broker is going away"), true // kfake closes the connection
	})
	newClient := func(opts ...kgo.Opt) (*kgo.Client, error) {
		return kc.NewClient(append(opts, kgo.RequestRetries(0))...)
	}
	want := []joiner.Source{{Topic: topic, Partition: 0, Offset: 1}, {Topic: topic, Partition: 1, Offset: 0}}
	got := map[string]string{}
	if err := joiner.ReadRecords(ctx, newClient, want, func(r *kgo.Record) error {
		got[fmt.Sprintf("%d@%d", r.Partition, r.Offset)] = string(r.Value)
		return nil
	}); err != nil {
		t.Fatalf("after %d refused ListOffsets: %v", refused.Load(), err)
	}
	if refused.Load() < 3 {
		t.Fatalf("only %d ListOffsets were refused: the test did not exercise the retry", refused.Load())
	}
	if fmt.Sprint(got) != "map[0@1:v2 1@0:v1]" {
		t.Fatalf("read back %v", got)
	}
}
