package testenv

import (
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/infra/launch"
)

// Broker is a Kafka cluster of the test's own (launch.Cluster: one node,
// or several, on free loopback ports), stopped when the test ends. Fault
// tests kill its nodes and start them again without disturbing the shared
// broker other tests use.
type Broker struct{ *launch.Cluster }

// PrivateBroker starts a single-node KRaft broker from the jars infra/setup.sh
// collected (the same script and configuration as the local broker) and
// stops it when the test ends. Its data lives in a temporary directory, so a
// Kill followed by Start brings back the same log, as a crashed broker does.
func PrivateBroker(t testing.TB) *Broker {
	t.Helper()
	return PrivateCluster(t, 1)
}

// PrivateCluster is PrivateBroker with nodes nodes in one controller
// quorum; with three or more, the internal topics are replicated three
// times with min.insync.replicas 2, as in production.
func PrivateCluster(t testing.TB, nodes int) *Broker {
	t.Helper()
	return privateCluster(t, nodes)
}

// PrivateBrokerEnv is PrivateBroker with env added to infra/kafka.sh's
// environment: KAFKA_HEAP="-Xmx384M -XX:NativeMemoryTracking=summary" lets
// a test read the broker's native memory with jcmd.
func PrivateBrokerEnv(t testing.TB, env ...string) *Broker {
	t.Helper()
	return privateCluster(t, 1, env...)
}

func privateCluster(t testing.TB, nodes int, env ...string) *Broker {
	t.Helper()
	Integration(t)
	b := &Broker{launch.NewCluster(t.TempDir(), launch.RepoDir(), nodes, env...)}
	b.Start(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("private broker's log: %s", b.LogFile())
		}
		_ = b.Down()
	})
	return b
}

// Start starts every node that is not running and waits until all are ready.
func (b *Broker) Start(t testing.TB) {
	t.Helper()
	up(t, "broker", strings.Join(b.Addrs, ","), b.Up)
}

// Kill kills node 1 with SIGKILL, as a crash or an OOM kill would, and waits
// until it is gone.
func (b *Broker) Kill(t testing.TB) { t.Helper(); b.KillNode(t, 1) }

// KillNode kills node (1-based) with SIGKILL and waits until it is gone.
func (b *Broker) KillNode(t testing.TB, node int) {
	t.Helper()
	if err := b.Crash(node); err != nil {
		t.Fatal(err)
	}
	t.Logf("private broker node %d (%s) killed with SIGKILL", node, b.Addrs[node-1])
}

// FreePort returns a loopback port nobody listens on now (launch.Port).
func FreePort(t testing.TB) int {
	t.Helper()
	return launch.Port()
}

// RepoDir is the repository's root (where infra/ lives).
func RepoDir(t testing.TB) string {
	t.Helper()
	return launch.RepoDir()
}
