package joiner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/loadtest"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestIntegrationBrokerRestart is the broker-outage acceptance test: the
// joiner and the recorder run as processes of their own on synthetic
// traffic while the broker is killed with SIGKILL and, 20 s later, started
// again on the same data. The joiner must commit again soon after the
// broker's return, the verifier must find every transition exactly once,
// every ClickHouse table must hold exactly the committed records of its
// topic (nothing aborted, nothing missing), and both processes must stop
// cleanly.
func TestIntegrationBrokerRestart(t *testing.T) {
	testenv.Parallel(t)
	broker := testenv.PrivateBroker(t)
	db, conn := analyticstest.Database(t)
	seeds := []string{broker.Addr}
	prefix := testenv.Unique(t, "out") + "."

	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute) // a hang guard
	defer cancel()
	newClient, admin, cat := faultTopics(ctx, t, seeds, prefix, 1)

	dir := t.TempDir()
	bin := testenv.Binary(t, dir)
	common := []string{"-brokers=" + broker.Addr, "-topic-prefix=" + prefix,
		"-log-level=info", "-stop-timeout=60s", "-apply-topics=false", "-topic-partitions=4",
		"-clickhouse-addr=" + testenv.ClickHouseAddr(t), "-clickhouse-database=" + db}
	joinerAdmin := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	jn := testenv.Start(t, bin, dir, "joiner", append([]string{"-target=joiner", "-instance-id=joiner", "-admin-addr=" + joinerAdmin}, common...)...)
	rec := testenv.Start(t, bin, dir, "recorder", append([]string{"-target=recorder", "-instance-id=recorder", "-admin-addr=127.0.0.1:0"}, common...)...)

	// The load: about 60 s of traffic, so the outage falls in its middle
	// and the producer must ride it out as the actors do.
	l := startLoad(ctx, t, newClient, cat)

	adm := kadm.NewClient(admin)
	group := prefix + "joiner"
	inputs := []string{cat.Name(topics.Obs), cat.Name(topics.Actions), cat.Name(topics.Rewards)}
	l.midway(ctx, t, adm, group, inputs)
	broker.Kill(t)
	// The outage shows in /healthz as a degradation (200, not a restart).
	degraded := ""
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
		if status, body := health(t, joinerAdmin); status == "degraded" && degraded == "" {
			degraded = body
		}
		sleep(ctx, t, 500*time.Millisecond)
	}
	if degraded == "" {
		t.Error("the joiner's /healthz never said degraded while the broker was away")
	}
	t.Logf("/healthz during the outage: %s", degraded)
	broker.Start(t)
	back := time.Now()
	waitCommitAgain(ctx, t, adm, group, inputs)
	recovered := time.Since(back)
	t.Logf("the joiner committed again %s after the broker's return", recovered.Round(100*time.Millisecond))
	if recovered > 60*time.Second {
		t.Errorf("the joiner committed again only %s after the broker came back; want within 60s", recovered)
	}

	for {
		status, body := health(t, joinerAdmin)
		if status == "ok" {
			break
		}
		t.Logf("/healthz after the broker's return: %s", body)
		sleep(ctx, t, 2*time.Second)
	}
	for _, line := range jn.Lines(t, "joiner session", "committing again", "join state restored") {
		t.Log(line)
	}

	rep := l.verify(ctx, t, newClient, admin, cat, group)
	if !rep.OK() {
		t.Fatalf("the joiner lost, duplicated or misjoined data across the outage: %s", rep)
	}

	// Every table equals the committed records of its topic once the
	// recorder has caught up, and holds nothing aborted.
	for {
		audit, err := loadtest.AuditRecorder(ctx, newClient, cat, conn, db)
		if err != nil {
			t.Fatal(err)
		}
		if audit.OK() {
			t.Logf("recorder audit:\n%s", audit)
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("ClickHouse does not hold exactly the committed records of each topic:\n%s", audit)
		case <-time.After(2 * time.Second):
		}
	}

	for _, p := range []*testenv.Process{jn, rec} {
		if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		<-p.Done
		if p.Err != nil {
			t.Errorf("%s did not stop cleanly: %v", p.Log, p.Err)
		}
	}
}

// TestIntegrationJoinerBrokerLoss: on a three-broker cluster (replication
// 3, min.insync.replicas 2), the broker that leads the most partitions is
// killed with SIGKILL while the joiner works, and stays down. The cluster
// fails over; the joiner must go on and the verifier find every transition
// exactly once.
func TestIntegrationJoinerBrokerLoss(t *testing.T) {
	testenv.Parallel(t)
	cluster := testenv.PrivateCluster(t, 3)
	seeds := cluster.Addrs
	prefix := testenv.Unique(t, "loss") + "."
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute) // a hang guard
	defer cancel()
	newClient, admin, cat := faultTopics(ctx, t, seeds, prefix, 3)

	dir := t.TempDir()
	bin := testenv.Binary(t, dir)
	jn := testenv.Start(t, bin, dir, "joiner", "-target=joiner", "-instance-id=joiner", "-brokers="+strings.Join(seeds, ","),
		"-topic-prefix="+prefix, "-topic-partitions=4", "-topic-replication=3", "-apply-topics=false",
		"-admin-addr=127.0.0.1:0", "-log-level=info", "-stop-timeout=60s")

	l := startLoad(ctx, t, newClient, cat)

	adm := kadm.NewClient(admin)
	group := prefix + "joiner"
	inputs := []string{cat.Name(topics.Obs), cat.Name(topics.Actions), cat.Name(topics.Rewards)}
	l.midway(ctx, t, adm, group, inputs)
	victim := busiestLeader(ctx, t, adm)
	cluster.KillNode(t, int(victim))
	lost := time.Now()
	waitCommitAgain(ctx, t, adm, group, inputs)
	t.Logf("the joiner committed again %s after broker %d died", time.Since(lost).Round(100*time.Millisecond), victim)

	rep := l.verify(ctx, t, newClient, admin, cat, group)
	for _, line := range jn.Lines(t, "joiner session", "committing again", "join state restored") {
		t.Log(line)
	}
	if !rep.OK() {
		t.Fatalf("the joiner lost, duplicated or misjoined data when a broker died: %s", rep)
	}
	if err := jn.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-jn.Done
	if jn.Err != nil {
		t.Errorf("the joiner did not stop cleanly: %v", jn.Err)
	}
}

// busiestLeader is loadtest.BusiestLeader, logged.
func busiestLeader(ctx context.Context, t *testing.T, adm *kadm.Client) int32 {
	t.Helper()
	best, led, err := loadtest.BusiestLeader(ctx, adm)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("partitions led per broker: %v; killing broker %d", led, best)
	return best
}

// faultTopics creates the catalog's topics (4 partitions, replication rf)
// on seeds and returns a client maker for them, an admin client and the
// catalog.
func faultTopics(ctx context.Context, t *testing.T, seeds []string, prefix string, rf int16) (joiner.ClientFunc, *kgo.Client, *topics.Catalog) {
	t.Helper()
	newClient := func(opts ...kgo.Opt) (*kgo.Client, error) {
		return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
	}
	cat := topics.New(topics.WithPrefix(prefix), topics.WithPartitions(4), topics.WithReplication(rf))
	admin, err := newClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	if _, err := topics.Apply(ctx, admin, cat); err != nil {
		t.Fatal(err)
	}
	return newClient, admin, cat
}

// load is the acceptance mix at 1,000 records/s (about 60 s), produced in
// the background by a client of its own, which rides out the faults as the
// actors' producers do.
type load struct {
	sent atomic.Int64
	done chan struct{}
	exp  *loadtest.Expected
	err  error
}

func startLoad(ctx context.Context, t *testing.T, newClient joiner.ClientFunc, cat *topics.Catalog) *load {
	t.Helper()
	c := loadtest.DefaultConfig(60000)
	c.Rate = 1000
	l := &load{done: make(chan struct{})}
	c.Progress = func(s, _ int) { l.sent.Store(int64(s)) }
	prod, err := newClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	go func() {
		defer close(l.done)
		l.exp, l.err = loadtest.Generate(ctx, prod, cat, c)
	}()
	return l
}

// midway returns once a quarter of the load is sent and the joiner has
// committed: a fault then hits a member in the middle of its work.
func (l *load) midway(ctx context.Context, t *testing.T, adm *kadm.Client, group string, inputs []string) {
	t.Helper()
	for committedSum(ctx, t, adm, group, inputs) == 0 || l.sent.Load() < 15000 {
		sleep(ctx, t, 200*time.Millisecond)
	}
}

// wait returns what the load expects once all of it is sent.
func (l *load) wait(t *testing.T) *loadtest.Expected {
	t.Helper()
	<-l.done
	if l.err != nil {
		t.Fatal(l.err)
	}
	return l.exp
}

// verify waits for all of the load and for the joiner to catch up with it,
// and returns the verifier's report.
func (l *load) verify(ctx context.Context, t *testing.T, newClient joiner.ClientFunc, admin *kgo.Client, cat *topics.Catalog, group string) loadtest.Report {
	t.Helper()
	exp := l.wait(t)
	if _, err := kafka.WaitCaughtUp(ctx, kafka.ClientFunc(newClient), group, cat.Inputs()); err != nil {
		t.Fatal(err)
	}
	rep, err := loadtest.Verify(ctx, newClient, cat, exp)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("verifier: %s", rep)
	return rep
}

// waitCommitAgain returns once the group commits beyond what it has
// committed now.
func waitCommitAgain(ctx context.Context, t *testing.T, adm *kadm.Client, group string, inputs []string) {
	t.Helper()
	before := committedSum(ctx, t, adm, group, inputs)
	for committedSum(ctx, t, adm, group, inputs) <= before {
		sleep(ctx, t, 500*time.Millisecond)
	}
}

// committedSum is the joiner group's committed offsets over its inputs,
// summed: it grows with every committed transaction.
func committedSum(ctx context.Context, t *testing.T, adm *kadm.Client, group string, inputs []string) int64 {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	offs, err := adm.FetchOffsetsForTopics(c, group, inputs...)
	if err != nil {
		return 0 // the broker is away or the group not there yet
	}
	var sum int64
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At > 0 {
			sum += o.At
		}
	})
	return sum
}

// health is the status of the process's /healthz at addr ("" when it does
// not answer) and its body.
func health(t *testing.T, addr string) (string, string) {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/healthz")
	if err != nil {
		return "", err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var h struct{ Status string }
	_ = json.Unmarshal(b, &h)
	return h.Status, strings.TrimSpace(string(b))
}

func sleep(ctx context.Context, t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-ctx.Done():
		t.Fatalf("timed out: %v", ctx.Err())
	case <-time.After(d):
	}
}
