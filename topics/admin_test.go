package topics

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
)

func TestCatalogPrefixAndConfigs(t *testing.T) {
	c := New(WithPrefix("run1."), WithPartitions(12), WithReplication(3))
	if got := c.Name(Obs); got != "run1.obs" {
		t.Fatalf("Name = %q", got)
	}
	obs, err := c.Spec(Obs)
	if err != nil {
		t.Fatal(err)
	}
	if obs.Partitions != 12 || obs.Replication != 3 {
		t.Fatalf("obs = %d partitions rf %d", obs.Partitions, obs.Replication)
	}
	w, _ := c.Spec(Weights)
	if w.Partitions != 1 || w.Configs()["cleanup.policy"] != Compact || w.Configs()["retention.ms"] != "-1" {
		t.Fatalf("weights spec = %+v configs %v", w, w.Configs())
	}
	if got := obs.Configs()["retention.ms"]; got != "604800000" {
		t.Fatalf("obs retention.ms = %s", got)
	}
	if _, err := c.Spec("nope"); err == nil {
		t.Fatal("unknown topic accepted")
	}
}

// applyTwiceThenDrift is the behaviour both the fake and the real cluster
// must show: Apply creates everything, a second Apply changes nothing, and a
// config changed behind the catalog's back is reported by Check and repaired
// by Apply.
func applyTwiceThenDrift(t *testing.T, seeds []string, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	cat := New(WithPrefix(prefix))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = adm.DeleteTopics(ctx, cat.Names()...)
	})

	drifts, err := Check(ctx, cl, cat)
	if err != nil {
		t.Fatal(err)
	}
	if len(drifts) != len(cat.Specs) {
		t.Fatalf("before apply: %d drifts, want %d missing topics: %v", len(drifts), len(cat.Specs), drifts)
	}
	changes, err := Apply(ctx, cl, cat)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != len(cat.Specs) {
		t.Fatalf("first apply: %d changes, want %d creates: %v", len(changes), len(cat.Specs), changes)
	}
	changes, err = Apply(ctx, cl, cat)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 0 {
		t.Fatalf("second apply changed %v", changes)
	}
	if drifts, err = Check(ctx, cl, cat); err != nil || len(drifts) != 0 {
		t.Fatalf("after apply: drifts %v err %v", drifts, err)
	}

	// Introduce drift: a shorter retention on obs, and fewer partitions
	// than the catalog wants on a catalog with more partitions.
	obs := cat.Name(Obs)
	resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("60000")}}, obs)
	if err == nil {
		_, err = resp.On(obs, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	// A config change reaches the broker's view through the metadata log
	// a moment after the alter returns: wait (bounded) until it shows.
	drifts = eventuallyDrifts(t, ctx, cl, cat, func(d []Drift) bool { return len(d) > 0 })
	if len(drifts) != 1 || drifts[0].Topic != obs || drifts[0].What != "retention.ms" || drifts[0].Have != "60000" {
		t.Fatalf("drifts = %v, want obs retention.ms 60000", drifts)
	}
	bigger := New(WithPrefix(prefix), WithPartitions(8))
	if drifts, err = Check(ctx, cl, bigger); err != nil {
		t.Fatal(err)
	}
	multi := 0 // topics WithPartitions resizes
	for _, s := range cat.Specs {
		if s.Partitions > 1 {
			multi++
		}
	}
	partitionDrifts := 0
	for _, d := range drifts {
		if d.What == "partitions" {
			partitionDrifts++
		}
	}
	if partitionDrifts != multi {
		t.Fatalf("with 8 partitions wanted: %d partition drifts, want %d: %v", partitionDrifts, multi, drifts)
	}
	changes, err = Apply(ctx, cl, bigger)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != multi+1 { // partition increases + the retention repair
		t.Fatalf("repair apply: %d changes, want %d: %v", len(changes), multi+1, changes)
	}
	if drifts = eventuallyDrifts(t, ctx, cl, bigger, func(d []Drift) bool { return len(d) == 0 }); len(drifts) != 0 {
		t.Fatalf("after repair: drifts %v", drifts)
	}
}

// eventuallyDrifts runs Check until done accepts its result or ctx ends, and
// returns the last result. It waits for the cluster to converge; it asserts
// nothing about how fast.
func eventuallyDrifts(t *testing.T, ctx context.Context, cl *kgo.Client, c *Catalog, done func([]Drift) bool) []Drift {
	t.Helper()
	for {
		drifts, err := Check(ctx, cl, c)
		if err != nil {
			t.Fatal(err)
		}
		if done(drifts) || ctx.Err() != nil {
			return drifts
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestApplyCheckEmbedded(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	applyTwiceThenDrift(t, c.ListenAddrs(), "unit.")
}

func TestIntegrationTopicsApplyCheck(t *testing.T) {
	seeds := testenv.Brokers(t)
	applyTwiceThenDrift(t, seeds, testenv.Unique(t, "t")+".")
}
