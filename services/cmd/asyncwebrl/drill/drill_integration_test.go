package drill

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/infra/netlab"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
)

// TestIntegrationDrill is `asyncwebrl drill` on a shorter schedule: a
// three-broker cluster of its own, synthetic load, two joiner and two
// recorder processes and a learner; the broker coordinating the learner's
// lease group, a joiner member, a recorder member and the learner are each
// killed with SIGKILL and started again. The learner must keep leading
// through the broker's kill (no exit of its own). Every topic and every ClickHouse
// table must hold exactly what was produced (nothing lost, nothing
// duplicated), every fault must recover (the restarted learner publishes a
// new version once the dead one's lease expired), the weights topic must
// hold one chain of versions across the learner's kill, and every member
// must stop cleanly. Where network namespaces work, the cluster is built
// across them and the network faults run too: the lease coordinator's
// link cut (a minority broker partitioned, running), latency with loss
// between the joiner and every broker, and latency to ClickHouse.
func TestIntegrationDrill(t *testing.T) {
	testenv.Integration(t)
	dir := t.TempDir()
	bin := testenv.Binary(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // a hang guard
	defer cancel()
	var out, errOut bytes.Buffer
	res, err := drill(ctx, []string{"--bin", bin, "--dir", dir + "/drill", "--rate", "250", "--tail", "10s",
		"--schedule", "broker@10s,broker-partition@20s,joiner@30s,joiner-latency@35s,recorder@50s,clickhouse-latency@52s,learner@55s",
		"--down", "5s", "--net-down", "8s", "--members", "2",
		"-topic-partitions=4", "-clickhouse-addr=" + testenv.ClickHouseAddr(t)}, &out, &errOut)
	t.Logf("drill output:\n%s", out.String())
	if err != nil {
		t.Fatalf("drill: %v\n%s", err, errOut.String())
	}
	if res == nil {
		t.Fatal("the drill returned no result")
	}
	topicsSeen := checkVerdicts(t, res)
	for _, name := range []string{"obs", "actions", "rewards", "transitions", "episodes", "dlq"} {
		if !topicsSeen[name] {
			t.Errorf("no verdict for topic %s", name)
		}
	}
	for _, v := range res.outputs {
		if v.Expected == 0 {
			t.Errorf("%s: nothing expected: the load did not reach the joiner", v.Name)
		}
	}
	if len(res.tables) == 0 {
		t.Error("no ClickHouse table verdict")
	}
	want := []string{"broker", "broker-partition", "joiner", "joiner-latency", "recorder", "clickhouse-latency", "learner"}
	if why := netlab.Available(); why != nil {
		t.Logf("network namespaces are not available (%v): the drill skips broker-partition and joiner-latency", why)
		want = []string{"broker", "joiner", "recorder", "clickhouse-latency", "learner"}
		if !strings.Contains(out.String(), "skipping the faults broker-partition, joiner-latency") {
			t.Error("the drill did not say it skipped the network faults")
		}
	}
	var got []string
	for _, f := range res.faults {
		got = append(got, f.name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("faults injected %v, want %v", got, want)
	}
	for _, f := range res.faults {
		if !f.ok() {
			t.Errorf("fault %s (%s) did not recover: %+v", f.name, f.what, f.recoveries)
		}
		if f.name == "broker" && !strings.HasPrefix(f.what, "kill -9 broker") {
			t.Errorf("broker fault: %s", f.what)
		}
		if f.name == "broker-partition" && (!strings.HasPrefix(f.what, "cut broker") || len(f.recoveries) != 2) {
			t.Errorf("broker-partition fault: %s, recoveries %+v", f.what, f.recoveries)
		}
		if f.name == "learner" && (!strings.HasPrefix(f.what, "kill -9 learner-1") || len(f.recoveries) != 1 || !strings.HasSuffix(f.recoveries[0].Group, "weights")) {
			t.Errorf("learner fault: %s, recoveries %+v", f.what, f.recoveries)
		}
	}
	// The learner published before its kill (the fault waits for a
	// version) and after its restart: a chain longer than the kill's
	// version, unbroken.
	if res.versions == nil {
		t.Fatal("no weights verdict: the learner did not run")
	}
	if !res.versions.OK() || res.versions.Last < 2 {
		t.Errorf("weights: %s", res.versions)
	}
	t.Logf("weights: %s", res.versions)
	// The broker fault kills the lease group's coordinator: the learner
	// rides it out leading, without a restart.
	for _, e := range res.selfExits {
		t.Errorf("supervised: %s", e)
	}
	if !res.report.OK() || !res.audit.OK() || len(res.unclean) > 0 {
		t.Errorf("verifier: %s\naudit:\n%s\nunclean: %v", res.report, res.audit, res.unclean)
	}
}

// TestIntegrationDrillActors is `asyncwebrl drill --synthetic=false`: real
// actors (a webenv and an actor process with two Chromium processes) on the
// shared broker, a joiner member, the actor and one of its browsers each
// killed with SIGKILL. The joiner's output must be exactly what the input
// topics call for (derived from them: nothing lost, nothing duplicated),
// ClickHouse must hold every event once, the browser's executors must have
// aborted their episodes, and every fault must recover.
func TestIntegrationDrillActors(t *testing.T) {
	testenv.Integration(t)
	dir := t.TempDir()
	bin := testenv.Binary(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // a hang guard
	defer cancel()
	var out, errOut bytes.Buffer
	res, err := drill(ctx, []string{"--synthetic=false", "--bin", bin, "--dir", dir + "/drill", "--executors", "4", "--tail", "10s",
		"--schedule", "joiner@15s,actor@30s,chromium@45s", "--down", "5s", "--members", "1",
		"-brokers=" + strings.Join(testenv.Brokers(t), ","), "-topic-partitions=3", "-clickhouse-addr=" + testenv.ClickHouseAddr(t)}, &out, &errOut)
	t.Logf("drill output:\n%s", out.String())
	if err != nil {
		t.Fatalf("drill: %v\n%s", err, errOut.String())
	}
	checkVerdicts(t, res)
	if res.traffic == nil || res.traffic.Finished == 0 {
		t.Fatalf("traffic %v: no episode finished", res.traffic)
	}
	if res.traffic.Aborted == 0 {
		t.Errorf("traffic %s: no episode aborted, though a browser was killed", res.traffic)
	}
	if len(res.faults) != 3 {
		t.Fatalf("%d faults injected, want 3", len(res.faults))
	}
	for _, f := range res.faults {
		if !f.ok() {
			t.Errorf("fault %s (%s) did not recover: %+v", f.name, f.what, f.recoveries)
		}
	}
	if !res.report.OK() || !res.audit.OK() || len(res.unclean) > 0 {
		t.Errorf("verifier: %s\naudit:\n%s\nunclean: %v", res.report, res.audit, res.unclean)
	}
}

// checkVerdicts fails t for every topic or table verdict of res with a
// loss, a duplicate or a count off, and returns the names it judged.
func checkVerdicts(t *testing.T, res *drillResult) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, v := range append(append(res.inputs, res.outputs...), res.tables...) {
		seen[v.Name] = true
		if v.Lost != 0 || v.Duplicated != 0 || v.Found != v.Expected {
			t.Errorf("%s: %d expected, %d found, %d lost, %d duplicated", v.Name, v.Expected, v.Found, v.Lost, v.Duplicated)
		}
	}
	return seen
}
