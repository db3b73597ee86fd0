package testenv

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Broker is a Kafka cluster of the test's own (one node, or several),
// started by infra/kafka.sh in a private run directory on free loopback
// ports. Fault tests kill its nodes and start them again without
// disturbing the shared broker other tests use.
type Broker struct {
	// Addr is the first node's client listener, host:port; Addrs every
	// node's, node 1 first.
	Addr  string
	Addrs []string
	dir   string
	nodes int
	env   []string
}

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
	Integration(t)
	dir := t.TempDir()
	port, ctrl := freeRun(t, nodes), freeRun(t, nodes)
	b := &Broker{
		dir:   dir,
		nodes: nodes,
		env: append(os.Environ(),
			"ASYNCWEBRL_RUN_DIR="+dir,
			"KAFKA_NODES="+strconv.Itoa(nodes),
			"KAFKA_PORT="+strconv.Itoa(port),
			"KAFKA_CONTROLLER_PORT="+strconv.Itoa(ctrl),
			"KAFKA_HEAP=-Xmx384M",
			"KAFKA_LIBS="+filepath.Join(RepoDir(t), ".run", "kafka", "libs"),
		),
	}
	for i := range nodes {
		b.Addrs = append(b.Addrs, "127.0.0.1:"+strconv.Itoa(port+2*i))
	}
	b.Addr = b.Addrs[0]
	b.Start(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("private broker's log: %s", b.LogFile())
		}
		_ = b.script("stop").Run()
	})
	return b
}

// Start starts every node that is not running and waits until all are ready.
func (b *Broker) Start(t testing.TB) {
	t.Helper()
	t0 := time.Now()
	if out, err := b.script("start").CombinedOutput(); err != nil {
		t.Fatalf("unable to start the private broker: %v\n%s", err, out)
	}
	t.Logf("private broker ready on %s in %s", strings.Join(b.Addrs, ","), time.Since(t0).Round(100*time.Millisecond))
}

// Kill kills node 1 with SIGKILL, as a crash or an OOM kill would, and waits
// until it is gone.
func (b *Broker) Kill(t testing.TB) { t.Helper(); b.KillNode(t, 1) }

// KillNode kills node (1-based) with SIGKILL and waits until it is gone.
func (b *Broker) KillNode(t testing.TB, node int) {
	t.Helper()
	if out, err := b.script("kill", strconv.Itoa(node)).CombinedOutput(); err != nil {
		t.Fatalf("unable to kill node %d of the private broker: %v\n%s", node, err, out)
	}
	t.Logf("private broker node %d (%s) killed with SIGKILL", node, b.Addrs[node-1])
}

// Status is what `make status` prints for the cluster: infra/kafka.sh
// status run without KAFKA_NODES, so that it finds the nodes from the count
// the run directory remembers. The error is the script's exit status (0
// when every node runs).
func (b *Broker) Status(t testing.TB) (string, error) {
	t.Helper()
	c := b.script("status")
	c.Env = slices.DeleteFunc(slices.Clone(b.env), func(kv string) bool { return strings.HasPrefix(kv, "KAFKA_NODES=") })
	out, err := c.CombinedOutput()
	return string(out), err
}

// LogFile is node 1's server log.
func (b *Broker) LogFile() string {
	if b.nodes == 1 {
		return filepath.Join(b.dir, "kafka", "server.log")
	}
	return filepath.Join(b.dir, "kafka", "node1", "server.log")
}

func (b *Broker) script(args ...string) *exec.Cmd {
	c := exec.Command("bash", append([]string{filepath.Join(repoDir(), "infra", "kafka.sh")}, args...)...)
	c.Env = b.env
	return c
}

// freeRun returns a port p such that p, p+2, ... (n ports, kafka.sh's
// layout of a cluster's nodes) are all free.
func freeRun(t testing.TB, n int) int {
	t.Helper()
	for {
		p := FreePort(t)
		ok := true
		for i := 1; i < n && ok; i++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+2*i))
			if ok = err == nil; ok {
				_ = l.Close()
			}
		}
		if ok {
			return p
		}
	}
}

// nextPort spreads the ports of one process's calls, so two calls in a row
// do not both pick the first free one.
var nextPort atomic.Int64

// FreePort returns a loopback port nobody listens on now, below the
// ephemeral range so that an outgoing connection cannot take it meanwhile.
func FreePort(t testing.TB) int {
	t.Helper()
	for p := 20000 + int((time.Now().UnixNano()+nextPort.Add(7))%10000); ; p++ {
		if p >= 30000 {
			p = 20000
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		_ = l.Close()
		return p
	}
}

// RepoDir is the repository's root (where infra/ lives).
func RepoDir(t testing.TB) string {
	t.Helper()
	return repoDir()
}

func repoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}
