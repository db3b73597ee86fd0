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
	dir        string // its -run-dir, which holds its log
}

// startAllTargets starts it as process name with args after the shared
// ones, on the shared broker.
func startAllTargets(t *testing.T, name, unique string, args ...string) allTargets {
	t.Helper()
	seeds := testenv.Brokers(t)
	admCl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(admCl)
	var r allTargets
	// Registered first, so that it runs after the process is killed.
	t.Cleanup(func() {
		defer admCl.Close()
		if r.cat == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p := r.prefix
		_, _ = adm.DeleteGroups(ctx, p+"joiner", p+"learner", p+"learner-lease-default", p+"recorder", p+"actor")
		_, _ = adm.DeleteTopics(ctx, r.cat.Names()...)
	})
	r = startAllTargetsOn(t, name, unique, seeds, nil, nil, args...)
	return r
}

// startAllTargetsOn starts it on seeds, with the broker's flags and env
// (its credentials) before args; the caller removes its topics.
func startAllTargetsOn(t *testing.T, name, unique string, seeds, flags, env []string, args ...string) allTargets {
	t.Helper()
	chAddr := testenv.ClickHouseAddr(t)
	r := allTargets{seeds: seeds, prefix: testenv.Unique(t, unique) + ".", db: testenv.Unique(t, unique)}
	r.dir = t.TempDir()
	bin := testenv.Binary(t, r.dir)
	r.cat = topics.New(topics.WithPrefix(r.prefix))
	chAdmin := analyticstest.Open(t)
	t.Cleanup(func() { analyticstest.Drop(t, chAdmin, r.db) })
	shared := append([]string{"-target=all",
		"-brokers=" + strings.Join(seeds, ","), "-topic-prefix=" + r.prefix, "-topic-partitions=2",
		"-clickhouse-addr=" + chAddr, "-clickhouse-database=" + r.db,
		"-admin-addr=" + freePort(t), "-webenv-addr=" + freePort(t), "-dashboard-addr=" + freePort(t), "-run-dir=" + r.dir}, flags...)
	r.p = testenv.StartEnv(t, bin, r.dir, name, env, append(shared, args...)...)
	return r
}
