package topics

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
)

func TestReplicationFollowsBrokerCount(t *testing.T) {
	for n, want := range map[int]int16{0: 1, 1: 1, 2: 2, 3: 3, 5: 3} {
		c := New().ForBrokers(n)
		for _, s := range c.Specs {
			if s.Replication != want {
				t.Fatalf("%d brokers: %s has replication %d, want %d", n, s.Name, s.Replication, want)
			}
		}
	}
	// An explicit replication is kept, and ForBrokers leaves the original
	// catalog as it was.
	auto := New()
	if c := New(WithReplication(2)).ForBrokers(3); c.Specs[0].Replication != 2 {
		t.Fatalf("explicit replication 2 became %d", c.Specs[0].Replication)
	}
	_ = auto.ForBrokers(3)
	if auto.Specs[0].Replication != AutoReplication {
		t.Fatalf("ForBrokers changed its receiver: %d", auto.Specs[0].Replication)
	}
}

// Resolve counts the brokers the cluster reports: three on a three-broker
// in-process cluster, so the default catalog gets replication 3.
func TestResolveCountsBrokers(t *testing.T) {
	for _, n := range []int{1, 3} {
		fake, err := kfake.NewCluster(kfake.NumBrokers(n))
		if err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(fake.ListenAddrs()...))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c, err := Resolve(ctx, cl, New())
		cancel()
		cl.Close()
		fake.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := ReplicationFor(n); c.Specs[0].Replication != want {
			t.Fatalf("%d brokers: replication %d, want %d", n, c.Specs[0].Replication, want)
		}
	}
}

// TestIntegrationCatalogOnThreeBrokers starts the cluster of
// `make up KAFKA_NODES=3` (infra/kafka.sh, three KRaft nodes in one quorum)
// on private ports, applies the catalog with its default replication and
// reads back from the brokers: three replicas on three distinct brokers for
// every partition, and min.insync.replicas 2 set on every topic by the
// catalog (not inherited from the broker's default). The cluster is stopped
// when the test ends.
func TestIntegrationCatalogOnThreeBrokers(t *testing.T) {
	cluster := testenv.PrivateCluster(t, 3)
	applyAndCheckReplication(t, cluster.Addrs, testenv.Unique(t, "rf3")+".", 3, "2")
}

// TestIntegrationCatalogOnOneBroker: on the single shared broker the same
// catalog gets replication 1 and min.insync.replicas 1.
func TestIntegrationCatalogOnOneBroker(t *testing.T) {
	seeds := testenv.Brokers(t)
	applyAndCheckReplication(t, seeds, testenv.Unique(t, "rf1")+".", 1, "1")
}

func applyAndCheckReplication(t *testing.T, seeds []string, prefix string, wantRF int, wantISR string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	cat := New(WithPrefix(prefix))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = kadm.NewClient(cl).DeleteTopics(ctx, cat.Names()...)
	})
	if _, err := Apply(ctx, cl, cat); err != nil {
		t.Fatal(err)
	}
	if drifts, err := Check(ctx, cl, cat); err != nil || len(drifts) != 0 {
		t.Fatalf("after apply: drifts %v, err %v", drifts, err)
	}

	// A client of its own: its metadata cache holds nothing from before
	// the topics existed.
	rd, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	adm := kadm.NewClient(rd)
	details, err := adm.ListTopics(ctx, cat.Names()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range cat.Names() {
		td, ok := details[name]
		if !ok || td.Err != nil {
			t.Fatalf("%s: not listed (%v)", name, td.Err)
		}
		for _, pd := range td.Partitions {
			distinct := map[int32]bool{}
			for _, r := range pd.Replicas {
				distinct[r] = true
			}
			if len(pd.Replicas) != wantRF || len(distinct) != wantRF {
				t.Errorf("%s/%d: replicas %v, want %d distinct brokers", name, pd.Partition, pd.Replicas, wantRF)
			}
		}
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, cat.Names()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			t.Fatalf("%s: %v", rc.Name, rc.Err)
		}
		found := false
		for _, c := range rc.Configs {
			if c.Key != "min.insync.replicas" {
				continue
			}
			found = true
			if c.Value == nil || *c.Value != wantISR || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
				t.Errorf("%s: min.insync.replicas %v from %v, want %s set on the topic", rc.Name, c.MaybeValue(), c.Source, wantISR)
			}
		}
		if !found {
			t.Errorf("%s: no min.insync.replicas", rc.Name)
		}
	}
}
