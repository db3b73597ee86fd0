package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// allTargets is a `-target=all` process of the binary on the real broker
// and ClickHouse, under a topic prefix and a database of its own (named
// after unique), on free ports, with its groups, topics and database
// dropped after the test.
type allTargets struct {
	p          *testenv.Process
	seeds      []string
	prefix, db string
	cat        *topics.Catalog
}

// startAllTargets starts it as process name with args after the shared
// ones.
func startAllTargets(t *testing.T, name, unique string, args ...string) allTargets {
	t.Helper()
	seeds := testenv.Brokers(t)
	chAddr := testenv.ClickHouseAddr(t)
	r := allTargets{seeds: seeds, prefix: testenv.Unique(t, unique) + ".", db: testenv.Unique(t, unique)}
	dir := t.TempDir()
	bin := testenv.Binary(t, dir)
	r.cat = topics.New(topics.WithPrefix(r.prefix))

	admCl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(admCl)
	chAdmin := analyticstest.Open(t)
	t.Cleanup(func() {
		defer admCl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p := r.prefix
		_, _ = adm.DeleteGroups(ctx, p+"joiner", p+"learner", p+"learner-lease-default", p+"recorder", p+"actor")
		_, _ = adm.DeleteTopics(ctx, r.cat.Names()...)
		analyticstest.Drop(t, chAdmin, r.db)
	})
	r.p = testenv.Start(t, bin, dir, name, append([]string{"-target=all",
		"-brokers=" + strings.Join(seeds, ","), "-topic-prefix=" + r.prefix, "-topic-partitions=2",
		"-clickhouse-addr=" + chAddr, "-clickhouse-database=" + r.db,
		"-admin-addr=" + freePort(t), "-webenv-addr=" + freePort(t), "-dashboard-addr=" + freePort(t), "-run-dir=" + dir}, args...)...)
	return r
}
