package launch

import (
	"os"
	"strings"
	"testing"
)

// TestIntegrationClusterRemembersItsSize: a run dir started with
// KAFKA_NODES=3 (what `make up KAFKA_NODES=3` does) answers status for all
// three nodes without KAFKA_NODES, as `make status` asks, and refuses to
// start a single node beside its running cluster.
func TestIntegrationClusterRemembersItsSize(t *testing.T) {
	if os.Getenv("ASYNCWEBRL_SKIP_INTEGRATION") == "1" {
		t.Skip("ASYNCWEBRL_SKIP_INTEGRATION=1")
	}
	b := NewCluster(t.TempDir(), RepoDir(), 3)
	if err := b.Up(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Down() })
	out, err := b.Status()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	for i, addr := range b.Addrs {
		if want := "node " + string(rune('1'+i)) + " running"; !strings.Contains(out, want) || !strings.Contains(out, addr) {
			t.Errorf("status does not show node %d running on %s:\n%s", i+1, addr, out)
		}
	}
	if n := strings.Count(out, " running "); n != 3 {
		t.Errorf("status shows %d running nodes, want 3:\n%s", n, out)
	}

	one := b.script("start")
	one.Env = append(one.Env, "KAFKA_NODES=1")
	got, err := one.CombinedOutput()
	if err == nil || !strings.Contains(string(got), "runs a cluster of 3 node(s), not 1") {
		t.Fatalf("a single node started beside the running cluster: %v\n%s", err, got)
	}
	if out, err := b.Status(); err != nil || strings.Count(out, " running ") != 3 {
		t.Fatalf("after the refused start: %v\n%s", err, out)
	}
}
