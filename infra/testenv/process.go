package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/infra/launch"
)

// Binary builds the asyncwebrl binary into dir and returns its path: tests
// that kill a component with SIGKILL run it as a process of its own.
func Binary(t testing.TB, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "asyncwebrl")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// Process is a component started by Start (a launch.Process).
type Process struct{ *launch.Process }

// Start runs bin with args, its output in dir/name.log. The test's cleanup
// kills it and, when the test failed, prints the log's last 30 lines.
func Start(t testing.TB, bin, dir, name string, args ...string) *Process {
	t.Helper()
	return StartEnv(t, bin, dir, name, nil, args...)
}

// StartEnv is Start with env added to the process's environment (a
// secret that must not show as a flag).
func StartEnv(t testing.TB, bin, dir, name string, env []string, args ...string) *Process {
	t.Helper()
	lp, err := launch.StartProcess(bin, dir, name, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{lp}
	t.Cleanup(func() {
		_ = p.Cmd.Process.Kill()
		<-p.Done
		if t.Failed() {
			b, _ := os.ReadFile(p.Log)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			t.Logf("last lines of %s:\n%s", name, strings.Join(lines[max(0, len(lines)-30):], "\n"))
		}
	})
	return p
}

// LogContains reports whether the process's log holds s.
func (p *Process) LogContains(t testing.TB, s string) bool {
	t.Helper()
	b, err := os.ReadFile(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), s)
}

// Lines returns the lines of the process's log that hold any of subs.
func (p *Process) Lines(t testing.TB, subs ...string) []string {
	t.Helper()
	lines, err := p.Process.Lines(subs...)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}
