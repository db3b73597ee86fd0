package joiner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestIntegrationReadRecordsBack: a restore reads the records its changelog
// names back from the real broker, and one that retention deleted is an
// error that says so instead of a wait.
func TestIntegrationReadRecordsBack(t *testing.T) {
	kc := kafkatest.Real(t, "readback", topics.WithPartitions(2))
	topic, newClient, adm := kc.Catalog.Name(topics.Obs), kc.NewClient, kadm.NewClient(kc.Admin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	produceAlternating(ctx, t, kc, topic, 6)
	// Partition 0 holds v0 v2 v4 at offsets 0 1 2; partition 1 v1 v3 v5.
	want := []joiner.Source{{Topic: topic, Partition: 0, Offset: 2}, {Topic: topic, Partition: 1, Offset: 0}, {Topic: topic, Partition: 1, Offset: 2}}
	got := map[string]string{}
	err := joiner.ReadRecords(ctx, newClient, want, func(r *kgo.Record) error {
		got[fmt.Sprintf("%d@%d", r.Partition, r.Offset)] = string(r.Value)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "map[0@2:v4 1@0:v1 1@2:v5]" {
		t.Fatalf("read back %v", got)
	}

	// Retention deletes partition 1 below offset 1.
	del := kadm.Offsets{}
	del.AddOffset(topic, 1, 1, -1)
	if _, err := adm.DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}
	err = joiner.ReadRecords(ctx, newClient, want, func(*kgo.Record) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "retention") {
		t.Fatalf("reading a deleted record back: err = %v, want one naming retention", err)
	}
}
