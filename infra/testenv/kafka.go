package testenv

import (
	"fmt"
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
	repo  string
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
	b := NewCluster(t.TempDir(), repoDir(), nodes)
	b.Start(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("private broker's log: %s", b.LogFile())
		}
		_ = b.Down()
	})
	return b
}

// NewCluster prepares a cluster of nodes nodes whose data lives in dir, on
// free loopback ports, run by repo's infra/kafka.sh from the jars in
// repo/.run; nothing starts until Up. It is PrivateCluster for a program
// rather than a test (asyncwebrl drill), which stops it with Down.
func NewCluster(dir, repo string, nodes int) *Broker {
	port, ctrl := freeRun(nodes), freeRun(nodes)
	b := &Broker{
		dir:   dir,
		repo:  repo,
		nodes: nodes,
		env: append(os.Environ(),
			"ASYNCWEBRL_RUN_DIR="+dir,
			"KAFKA_NODES="+strconv.Itoa(nodes),
			"KAFKA_PORT="+strconv.Itoa(port),
			"KAFKA_CONTROLLER_PORT="+strconv.Itoa(ctrl),
			"KAFKA_HEAP=-Xmx384M",
			"KAFKA_LIBS="+filepath.Join(repo, ".run", "kafka", "libs"),
		),
	}
	for i := range nodes {
		b.Addrs = append(b.Addrs, "127.0.0.1:"+strconv.Itoa(port+2*i))
	}
	b.Addr = b.Addrs[0]
	return b
}

// Start starts every node that is not running and waits until all are ready.
func (b *Broker) Start(t testing.TB) {
	t.Helper()
	t0 := time.Now()
	if err := b.Up(); err != nil {
		t.Fatal(err)
	}
	t.Logf("private broker ready on %s in %s", strings.Join(b.Addrs, ","), time.Since(t0).Round(100*time.Millisecond))
}

// Up is Start for a program: it starts every node that is not running and
// waits until all are ready.
func (b *Broker) Up() error {
	if out, err := b.script("start").CombinedOutput(); err != nil {
		return fmt.Errorf("unable to start the private broker: %w\n%s", err, out)
	}
	return nil
}

// StartNode starts node (1-based) again, alone, and waits until it is ready.
func (b *Broker) StartNode(node int) error {
	if out, err := b.script("start-node", strconv.Itoa(node)).CombinedOutput(); err != nil {
		return fmt.Errorf("unable to start node %d of the private broker: %w\n%s", node, err, out)
	}
	return nil
}

// Down stops every node (SIGTERM, SIGKILL after 30 s).
func (b *Broker) Down() error {
	if out, err := b.script("stop").CombinedOutput(); err != nil {
		return fmt.Errorf("unable to stop the private broker: %w\n%s", err, out)
	}
	return nil
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

// Crash is KillNode for a program: SIGKILL to node, returning once it is gone.
func (b *Broker) Crash(node int) error {
	if out, err := b.script("kill", strconv.Itoa(node)).CombinedOutput(); err != nil {
		return fmt.Errorf("unable to kill node %d of the private broker: %w\n%s", node, err, out)
	}
	return nil
}

// LogFile is node 1's server log.
func (b *Broker) LogFile() string { return b.NodeLog(1) }

// NodeLog is node's (1-based) server log.
func (b *Broker) NodeLog(node int) string {
	if b.nodes == 1 {
		return filepath.Join(b.dir, "kafka", "server.log")
	}
	return filepath.Join(b.dir, "kafka", "node"+strconv.Itoa(node), "server.log")
}

func (b *Broker) script(args ...string) *exec.Cmd {
	c := exec.Command("bash", append([]string{filepath.Join(b.repo, "infra", "kafka.sh")}, args...)...)
	c.Env = b.env
	return c
}

// freeRun returns a port p such that p, p+2, ... (n ports, kafka.sh's
// layout of a cluster's nodes) are all free.
func freeRun(n int) int {
	for {
		p := freePort()
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
	return freePort()
}

// Port is FreePort for code that runs outside tests (the drill).
func Port() int { return freePort() }

func freePort() int {
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

// FindRepo is the repository a program runs in: the first directory from
// dir upwards that holds infra/kafka.sh, else the one this package was
// built from (a binary run outside its checkout).
func FindRepo(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "infra", "kafka.sh")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if _, err := os.Stat(filepath.Join(repoDir(), "infra", "kafka.sh")); err == nil {
		return repoDir(), nil
	}
	return "", fmt.Errorf("unable to find infra/kafka.sh above %s or in %s: run from the repository", dir, repoDir())
}
