// Package kafkatest gives a test a Kafka cluster with the topic catalog
// applied under a prefix of its own: franz-go's in-process fake (unit tests)
// or the real broker infra/ runs (integration tests). Every package's tests
// set their cluster up here instead of each writing its own client, apply
// and clean-up. It lives apart from testenv because the topics package's
// own tests import testenv.
package kafkatest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Cluster is a test's view of a Kafka cluster.
type Cluster struct {
	Seeds []string
	// Catalog is applied on the cluster; its prefix is the test's own.
	Catalog *topics.Catalog
	// Admin is a client on Seeds (admin requests, producing), closed when
	// the test ends.
	Admin *kgo.Client
	// Fake is the in-process cluster (to inject failures with ControlKey),
	// nil on the real broker.
	Fake *kfake.Cluster
}

// StartFake starts franz-go's in-process cluster (one broker, topics
// created on demand, then opts) and closes it when t ends. The Cluster has
// no catalog and no admin client yet: for tests of their own topics.
func StartFake(t testing.TB, opts ...kfake.Opt) *Cluster {
	t.Helper()
	fake, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation()}, opts...)...)
	if err != nil {
		t.Fatalf("unable to start the in-process Kafka: %v", err)
	}
	t.Cleanup(fake.Close)
	return &Cluster{Seeds: fake.ListenAddrs(), Fake: fake}
}

// Fake applies a catalog with prefix and opts on a new in-process cluster.
func Fake(t testing.TB, prefix string, opts ...topics.Option) *Cluster {
	t.Helper()
	fake := StartFake(t).Fake
	c := apply(t, fake.ListenAddrs(), prefix, opts)
	c.Fake = fake
	return c
}

// Real applies a catalog with opts on the real broker (testenv.Brokers)
// under a prefix unique to the test, testenv.Unique(t, what) and a dot;
// when the test ends its topics and the groups named with its prefix are
// deleted.
func Real(t testing.TB, what string, opts ...topics.Option) *Cluster {
	t.Helper()
	return On(t, testenv.Brokers(t), testenv.Unique(t, what)+".", opts...)
}

// On is Real on a broker of the test's own (testenv.PrivateBroker) or any
// other seeds, under prefix.
func On(t testing.TB, seeds []string, prefix string, opts ...topics.Option) *Cluster {
	t.Helper()
	c := apply(t, seeds, prefix, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		adm := kadm.NewClient(c.Admin)
		if listed, err := adm.ListGroups(ctx); err == nil {
			var ours []string
			for _, g := range listed.Groups() {
				if strings.HasPrefix(g, prefix) {
					ours = append(ours, g)
				}
			}
			if len(ours) > 0 {
				_, _ = adm.DeleteGroups(ctx, ours...)
			}
		}
		_, _ = adm.DeleteTopics(ctx, c.Catalog.Names()...)
	})
	return c
}

func apply(t testing.TB, seeds []string, prefix string, opts []topics.Option) *Cluster {
	t.Helper()
	c := &Cluster{Seeds: seeds, Catalog: topics.New(append([]topics.Option{topics.WithPrefix(prefix)}, opts...)...)}
	// Batches as large as the catalog's largest message (a policy's
	// weights), which franz-go's default of 1 MB refuses.
	c.Admin = c.Client(t, kgo.ProducerBatchMaxBytes(topics.MaxMessageBytes))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := topics.Apply(ctx, c.Admin, c.Catalog); err != nil {
		t.Fatalf("unable to apply the topic catalog: %v", err)
	}
	return c
}

// NewClient is a client on the cluster with opts after the seeds (a
// kafka.ClientFunc, loadtest's newClient).
func (c *Cluster) NewClient(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Seeds...)}, opts...)...)
}

// Client is NewClient that fails t on an error and closes the client when
// t ends.
func (c *Cluster) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := c.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}
