package topics

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestReadLag(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 3 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 1, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	lag, err := ReadLag(ctx, adm, "g", "t")
	if err != nil {
		t.Fatal(err)
	}
	if n, parts := lag.Behind(); n != 3 || parts != 1 || len(lag.Partitions) != 2 || lag.Partitions[1].Committed != -1 {
		t.Fatalf("a group that never committed: %+v", lag)
	}
	offs := kadm.Offsets{}
	offs.AddOffset("t", 1, 2, -1)
	if _, err := adm.CommitOffsets(ctx, "g", offs); err != nil {
		t.Fatal(err)
	}
	if lag, err = ReadLag(ctx, adm, "g", "t"); err != nil {
		t.Fatal(err)
	}
	if n, _ := lag.Behind(); n != 1 || lag.Partitions[1].Committed != 2 || lag.CaughtUp() {
		t.Fatalf("committed at 2 of 3: %+v", lag)
	}
}
