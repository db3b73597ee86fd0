package netlab

import (
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
)

// serve runs a TCP listener inside host h's namespace (python3's
// http.server: a process started by `ip netns exec`, as the drill starts
// brokers) and waits until the caller reaches it.
func serve(t *testing.T, l *Lab, h *Host) string {
	t.Helper()
	addr := net.JoinHostPort(h.Addr, "18080")
	bin, args := l.Command(h.Name, "python3", "-m", "http.server", "--bind", h.Addr, "18080")
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		if i == 100 {
			t.Fatalf("the server in %s never answered: %v", h.NS, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestIntegrationLab: a host's server is reached from the caller and from
// another host; a cut partitions it (no connection from either), a heal
// brings it back; Close leaves no namespace behind.
func TestIntegrationLab(t *testing.T) {
	testenv.Integration(t)
	if err := Available(); err != nil {
		t.Skipf("network namespaces are not available here: %v", err)
	}
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	a, err := l.AddHost("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.AddHost("b")
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, l, a)
	dialFromB := func(addr string) error {
		host, port, _ := net.SplitHostPort(addr)
		bin, args := l.Command(b.Name, "python3", "-c", "import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2).close()", host, port)
		return exec.Command(bin, args...).Run()
	}
	fromB := func() error { return dialFromB(addr) }
	if err := fromB(); err != nil {
		t.Fatalf("host b cannot reach host a: %v", err)
	}
	if err := l.Cut("a"); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
		c.Close()
		t.Fatal("a cut host answered the caller")
	}
	if err := fromB(); err == nil {
		t.Fatal("a cut host answered host b")
	}
	if err := l.Heal("a"); err != nil {
		t.Fatal(err)
	}
	var c net.Conn
	for i := 0; i < 50; i++ {
		if c, err = net.DialTimeout("tcp", addr, time.Second); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("a healed host does not answer: %v", err)
	}
	c.Close()
	// A proxy on the gateway serves the hosts: b reaches a through it.
	p, err := Listen(l.Gateway+":0", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := dialFromB(p.Addr()); err != nil {
		t.Fatalf("host b cannot reach the proxy on the gateway: %v", err)
	}
	if p.Conns.Load() != 1 {
		t.Fatalf("the proxy counted %d connections, want 1", p.Conns.Load())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out, _ := ip("netns", "list")
	for _, ns := range []string{a.NS, b.NS, l.hub} {
		if containsLine(out, ns) {
			t.Errorf("namespace %s left after Close", ns)
		}
	}
}

func containsLine(out, name string) bool {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return true
		}
	}
	return false
}

// TestIntegrationSweep: a lab left by a process that died (a drill killed
// with -9) is removed by the next New, with what still ran in it.
func TestIntegrationSweep(t *testing.T) {
	testenv.Integration(t)
	if err := Available(); err != nil {
		t.Skipf("network namespaces are not available here: %v", err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	ns := "awrl-" + strconv.Itoa(dead.Process.Pid) + "-b1"
	if out, err := ip("netns", "add", ns); err != nil {
		t.Fatal(out)
	}
	left := exec.Command("ip", "netns", "exec", ns, "sleep", "600")
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- left.Wait() }()
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if out, _ := ip("netns", "list"); containsLine(out, ns) {
		t.Errorf("namespace %s of dead pid %d left after New", ns, dead.Process.Pid)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = left.Process.Kill()
		t.Error("the process left in the dead lab's namespace still runs")
	}
}
