package launch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Cluster is a Kafka cluster of a program's own (one node, or several),
// started by infra/kafka.sh in a private run directory on free loopback
// ports. Fault drills kill its nodes and start them again without
// disturbing the shared broker.
type Cluster struct {
	// Addr is the first node's client listener, host:port; Addrs every
	// node's, node 1 first.
	Addr  string
	Addrs []string
	// ports are the nodes' client ports, node 1 first; a node's listener
	// is its host's (127.0.0.1, or its address in InNamespaces) on it.
	ports []int
	dir   string
	repo  string
	nodes int
	env   []string
}

// NewCluster prepares a cluster of nodes nodes whose data lives in dir, on
// free loopback ports, run by repo's infra/kafka.sh from the jars in
// repo/.run; nothing starts until Up, and Down stops it. env adds to the
// script's environment (KAFKA_SECURE=1: a SASL_SSL listener).
func NewCluster(dir, repo string, nodes int, env ...string) *Cluster {
	port, ctrl := FreeRun(nodes), FreeRun(nodes)
	b := &Cluster{
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
	b.env = append(b.env, env...)
	for i := range nodes {
		b.ports = append(b.ports, port+2*i)
		b.Addrs = append(b.Addrs, "127.0.0.1:"+strconv.Itoa(port+2*i))
	}
	b.Addr = b.Addrs[0]
	return b
}

// Node is node i's (1-based) placement in InNamespaces: its namespace, its
// address there, and the address clients are told to use (a proxy).
type Node struct {
	NS, Host, Advertised string
}

// Listener is node's (1-based) client listener on host (its address in
// its namespace), host:port.
func (b *Cluster) Listener(node int, host string) string {
	return host + ":" + strconv.Itoa(b.ports[node-1])
}

// InNamespaces runs the nodes in network namespaces (infra/kafka.sh's
// KAFKA_NETNS): node i in nodes[i-1].NS, listening on its Host, its
// clients sent to its Advertised address. Addrs become the advertised
// ones. Call it before Up.
func (b *Cluster) InNamespaces(nodes []Node) {
	var ns, hosts, adv []string
	for _, n := range nodes {
		ns, hosts, adv = append(ns, n.NS), append(hosts, n.Host), append(adv, n.Advertised)
	}
	b.env = append(b.env, "KAFKA_NETNS="+strings.Join(ns, ","), "KAFKA_HOSTS="+strings.Join(hosts, ","), "KAFKA_ADVERTISED="+strings.Join(adv, ","))
	b.Addrs = adv
	b.Addr = adv[0]
}

// Up starts every node that is not running and waits until all are ready.
func (b *Cluster) Up() error {
	if out, err := b.script("start").CombinedOutput(); err != nil {
		return fmt.Errorf("unable to start the private broker: %w\n%s", err, out)
	}
	return nil
}

// StartNode starts node (1-based) again, alone, and waits until it is ready.
func (b *Cluster) StartNode(node int) error {
	if out, err := b.script("start-node", strconv.Itoa(node)).CombinedOutput(); err != nil {
		return fmt.Errorf("unable to start node %d of the private broker: %w\n%s", node, err, out)
	}
	return nil
}

// Down stops every node (SIGTERM, SIGKILL after 30 s).
func (b *Cluster) Down() error {
	if out, err := b.script("stop").CombinedOutput(); err != nil {
		return fmt.Errorf("unable to stop the private broker: %w\n%s", err, out)
	}
	return nil
}

// Crash kills node (1-based) with SIGKILL, as a crash or an OOM kill would,
// returning once it is gone.
func (b *Cluster) Crash(node int) error {
	if out, err := b.script("kill", strconv.Itoa(node)).CombinedOutput(); err != nil {
		return fmt.Errorf("unable to kill node %d of the private broker: %w\n%s", node, err, out)
	}
	return nil
}

// Status is what `make status` prints for the cluster: infra/kafka.sh
// status run without KAFKA_NODES, so that it finds the nodes from the count
// the run directory remembers. The error is the script's exit status (0
// when every node runs).
func (b *Cluster) Status() (string, error) {
	c := b.script("status")
	c.Env = slices.DeleteFunc(slices.Clone(b.env), func(kv string) bool { return strings.HasPrefix(kv, "KAFKA_NODES=") })
	out, err := c.CombinedOutput()
	return string(out), err
}

// PID is node's (1-based) process id, from the pid file infra/kafka.sh
// keeps beside its log.
func (b *Cluster) PID(node int) (int, error) {
	f := filepath.Join(filepath.Dir(b.NodeLog(node)), "kafka.pid")
	raw, err := os.ReadFile(f)
	if err != nil {
		return 0, fmt.Errorf("unable to read node %d's pid: %w", node, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return 0, fmt.Errorf("unable to read node %d's pid from %s: %w", node, f, err)
	}
	return pid, nil
}

// LogFile is node 1's server log.
func (b *Cluster) LogFile() string { return b.NodeLog(1) }

// NodeLog is node's (1-based) server log.
func (b *Cluster) NodeLog(node int) string {
	if b.nodes == 1 {
		return filepath.Join(b.dir, "kafka", "server.log")
	}
	return filepath.Join(b.dir, "kafka", "node"+strconv.Itoa(node), "server.log")
}

func (b *Cluster) script(args ...string) *exec.Cmd {
	c := exec.Command("bash", append([]string{filepath.Join(b.repo, "infra", "kafka.sh")}, args...)...)
	c.Env = b.env
	return c
}
