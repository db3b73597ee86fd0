package kafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
)

// TestWaitCaughtUpTransactionMarkers: a group that consumed every committed
// record of a transactional partition rests below the end (franz-go commits
// last offset + 1, before the commit marker and before aborted records), and
// is caught up; a group that left a committed record unread is not, and the
// lag names it.
func TestWaitCaughtUpTransactionMarkers(t *testing.T) {
	newClient := kafkatest.StartFake(t).NewClient
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admCl, err := newClient(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	const topic, group = "t", "g"
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	txn, err := newClient(kgo.TransactionalID("x"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	write := func(partition int32, n int, commit bool) {
		t.Helper()
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for range n {
			if err := txn.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: partition, Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	// Partition 0: offsets 0-2 committed data, 3 the commit marker.
	write(0, 3, true)
	// Partition 1: the same, then 4-5 aborted data and 6 its marker.
	write(1, 3, true)
	write(1, 2, false)
	// Partition 2: five plain records.
	for range 5 {
		if err := admCl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 2, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(p int32, at int64) {
		t.Helper()
		var o kadm.Offsets
		o.AddOffset(topic, p, at, -1)
		if _, err := adm.CommitOffsets(ctx, group, o); err != nil {
			t.Fatal(err)
		}
	}
	commit(0, 3)
	commit(1, 3)
	commit(2, 2)

	short, cancelShort := context.WithTimeout(ctx, 3*time.Second)
	lag, err := WaitCaughtUp(short, newClient, group, []string{topic})
	cancelShort()
	if err == nil || !strings.Contains(err.Error(), "unable to catch up group g") {
		t.Fatalf("behind group: err = %v, lag %+v", err, lag)
	}
	records, parts := lag.Behind()
	if records != 3 || parts != 1 {
		t.Fatalf("behind %d records on %d partitions, want 3 on 1: %+v", records, parts, lag.Partitions)
	}
	want := []PartitionLag{
		{Topic: topic, Partition: 0, Committed: 3, End: 4},
		{Topic: topic, Partition: 1, Committed: 3, End: 7},
		{Topic: topic, Partition: 2, Committed: 2, End: 5, Behind: 3},
	}
	for i, p := range lag.Partitions {
		if p != want[i] {
			t.Errorf("partition %d: %+v, want %+v", i, p, want[i])
		}
	}

	commit(2, 5)
	lag, err = WaitCaughtUp(ctx, newClient, group, []string{topic})
	if err != nil || !lag.CaughtUp() {
		t.Fatalf("caught-up group: err = %v, lag %+v", err, lag)
	}
}

// A group with no offsets on a partition that holds only an aborted
// transaction has nothing to read: caught up.
func TestWaitCaughtUpOnlyAborted(t *testing.T) {
	newClient := kafkatest.StartFake(t).NewClient
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := newClient(kgo.TransactionalID("x"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	lag, err := WaitCaughtUp(ctx, newClient, "nobody", []string{"t"})
	if err != nil || len(lag.Partitions) != 1 || lag.Partitions[0].Committed != -1 || lag.Partitions[0].End != 2 {
		t.Fatalf("err = %v, lag %+v", err, lag)
	}
}
