package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary builds the real asyncwebrl once per test run: these tests check
// what a user sees (exit codes, stderr, signals), which only a process shows.
func binary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "asyncwebrl")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// handed are the addresses freePort returned: never twice.
var (
	handedMu sync.Mutex
	handed   = map[string]bool{}
)

// freePort returns a loopback address nothing listens on, with a port
// below the kernel's ephemeral range: the child binds it only later, and
// every ":0" listener (the embedded broker's, say) draws from the
// ephemeral range, so it cannot take the port first.
func freePort(t *testing.T) string {
	t.Helper()
	lo := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				lo = v
			}
		}
	}
	const base = 20000
	if lo <= base+100 {
		lo = 65535 // no room below: any port (the old race stays possible)
	}
	handedMu.Lock()
	defer handedMu.Unlock()
	for range 200 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(base+mrand.IntN(lo-base)))
		if handed[addr] {
			continue
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		handed[addr] = true
		return addr
	}
	t.Fatal("no free port below the ephemeral range")
	return ""
}

func TestBadInputOneLineNonZero(t *testing.T) {
	bin := binary(t)
	closed := freePort(t) // nothing listens there once the listener closed
	cases := []struct {
		name string
		args []string
		env  []string
		code int
		want string
	}{
		{"unknown target", []string{"-target=nope"}, nil, 2, `unknown target "nope"`},
		{"malformed flag", []string{"-stop-timeout=abc"}, nil, 2, "invalid value"},
		{"malformed env", nil, []string{"ASYNCWEBRL_TOPIC_PARTITIONS=many"}, 2, "ASYNCWEBRL_TOPIC_PARTITIONS"},
		{"unknown command", []string{"frob"}, nil, 2, `unknown command "frob"`},
		{"unreachable broker", []string{"-brokers=" + closed, "-admin-addr=127.0.0.1:0", "-log-level=error"}, nil, 1, "unable to reach Kafka at " + closed},
		{"topics on unreachable broker", []string{"topics", "check", "-brokers=" + closed}, nil, 1, "unable to reach Kafka"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, c.args...)
			cmd.Env = append(os.Environ(), c.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.code, stderr.String())
			}
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "asyncwebrl: ") || !strings.Contains(lines[0], c.want) {
				t.Fatalf("want one line containing %q, got:\n%s", c.want, stderr.String())
			}
			if strings.Contains(stderr.String(), "panic") || strings.Contains(stderr.String(), "goroutine ") {
				t.Fatalf("stack trace in stderr:\n%s", stderr.String())
			}
		})
	}
}

// TestEmbeddedStartHealthzSIGTERM is the zero-setup acceptance: no Kafka
// installed, all targets, /healthz ok, and a clean stop on SIGTERM with the
// services stopped in reverse start order.
func TestEmbeddedStartHealthzSIGTERM(t *testing.T) {
	bin := binary(t)
	admin := freePort(t)
	// Its own database: with the default one, its recorder migrated the
	// shared database a training run was writing to (a branch's new
	// migration reached it, and the test's kill left it half applied).
	cmd := exec.Command(bin, "-target=all", "--brokers=embedded", "-admin-addr="+admin, "-webenv-addr="+freePort(t), "-dashboard-addr="+freePort(t), "-run-dir="+t.TempDir(),
		"-clickhouse-database=cli_embedded_test")
	var stderr safeBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var body string
	for ctx.Err() == nil {
		resp, err := http.Get("http://" + admin + "/healthz")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				body = string(b)
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(body, `"status":"ok"`) {
		t.Fatalf("healthz never ok (last %q); stderr:\n%s", body, stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v; stderr:\n%s", err, stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("did not stop after SIGTERM; stderr:\n%s", stderr.String())
	}
	log := stderr.String()
	if !strings.Contains(log, "stopped cleanly") {
		t.Fatalf("no clean stop in log:\n%s", log)
	}
	// Reverse order: every "started service=X" line's X must appear in
	// "stopped service=X" lines in the opposite order.
	var started, stopped []string
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		line := sc.Text()
		if s := field(line, "service"); s != "" {
			switch {
			case strings.Contains(line, "msg=started"):
				started = append(started, s)
			case strings.Contains(line, "msg=stopped"):
				stopped = append(stopped, s)
			}
		}
	}
	if len(started) < 2 || len(started) != len(stopped) {
		t.Fatalf("started %v stopped %v", started, stopped)
	}
	for i := range started {
		if started[i] != stopped[len(stopped)-1-i] {
			t.Fatalf("stop order %v is not the reverse of start order %v", stopped, started)
		}
	}
}

func field(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// TestBinaryLinksNoTesting: the binary's tools (the drill) start clusters,
// servers and processes through infra/launch, never through the test
// helpers, so package testing is not linked into asyncwebrl.
func TestBinaryLinksNoTesting(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "testing" || strings.HasSuffix(pkg, "/infra/testenv") {
			t.Errorf("the binary links %s", pkg)
		}
	}
}
