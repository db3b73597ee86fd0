package loadtest

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestWriteFloorCopiesCommittedOutput: the write floor writes exactly what
// the joiner committed (not an aborted transaction's records), byte for byte
// and partition for partition, plus one warm-up record per topic.
func TestWriteFloorCopiesCommittedOutput(t *testing.T) {
	newClient, ctx := fakeCluster(t)
	from := topics.New(topics.WithPrefix("out."), topics.WithPartitions(3))
	to := topics.New(topics.WithPrefix("out.floor."), topics.WithPartitions(3))
	admin, err := newClient()
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, k := range []*topics.Catalog{from, to} {
		if _, err := topics.Apply(ctx, admin, k); err != nil {
			t.Fatal(err)
		}
	}

	// What "the joiner" wrote: two committed transactions and an aborted one.
	prod, err := newClient(kgo.TransactionalID("joiner"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	want := map[string]int{} // topic/partition/value -> copies
	var wantSize OutputSize
	write := func(commit bool, tag string) {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for _, name := range outputTopics {
			parts := int32(3)
			if name == topics.DLQ {
				parts = 1
			}
			for p := range parts {
				v := fmt.Sprintf("%s-%s-%d", tag, name, p)
				recs = append(recs, &kgo.Record{Topic: from.Name(name), Partition: p, Key: []byte("k"), Value: []byte(v)})
				if commit {
					want[fmt.Sprintf("%s/%d/%s", to.Name(name), p, v)]++
					wantSize.Records++
					wantSize.Bytes += int64(len(v))
					if name == topics.Transitions {
						wantSize.Transitions++
						wantSize.TransitionBytes += int64(len(v))
					}
				}
			}
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	write(true, "a")
	write(false, "aborted")
	write(true, "b")

	took, size, err := writeFloor(ctx, newClient, from, to, 2)
	n := size.Records
	if err != nil {
		t.Fatal(err)
	}
	if n != 2*(3*3+1) || took <= 0 {
		t.Fatalf("writeFloor wrote %d records in %s; want %d committed records copied", n, took, 2*(3*3+1))
	}
	if size != wantSize {
		t.Fatalf("writeFloor measured %+v, want the committed records' %+v", size, wantSize)
	}
	got := map[string]int{}
	for _, name := range outputTopics {
		err := joiner.ReadCommitted(ctx, newClient, to.Name(name), nil, func(r *kgo.Record) error {
			if string(r.Value) != "warm-up" {
				got[fmt.Sprintf("%s/%d/%s", r.Topic, r.Partition, r.Value)]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("floor topics hold %d distinct records, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d copies, want %d", k, got[k], v)
		}
	}
}
