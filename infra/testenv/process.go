package testenv

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

// Process is a component started by Start.
type Process struct {
	Cmd *exec.Cmd
	// Log is the file holding its stdout and stderr.
	Log string
	// from is where its own lines start in Log (a restart appends).
	from int64
	// Done is closed when it has exited; Err is then its exit error.
	Done chan struct{}
	Err  error
}

// Start runs bin with args, its output in dir/name.log. The test's cleanup
// kills it and, when the test failed, prints the log's last 30 lines.
func Start(t testing.TB, bin, dir, name string, args ...string) *Process {
	t.Helper()
	p, err := StartProcess(bin, dir, name, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
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

// StartProcess is Start for a program (asyncwebrl drill), which kills what
// it started itself: bin runs with args and, when env is not nil, with env
// added to this process's environment; its output is appended to
// dir/name.log, so a restarted component continues its predecessor's log.
func StartProcess(bin, dir, name string, env []string, args ...string) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("unable to open the log of %s: %w", name, err)
	}
	from, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("unable to find the end of the log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("unable to start %s: %w", name, err)
	}
	p := &Process{Cmd: cmd, Log: logPath, from: from, Done: make(chan struct{})}
	go func() { p.Err = cmd.Wait(); f.Close(); close(p.Done) }()
	return p, nil
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
	b, err := os.ReadFile(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		for _, s := range subs {
			if strings.Contains(line, s) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

// LastError returns the last line this process (not a predecessor whose
// log it continues) logged as an error (level=ERROR), else its last line:
// why a member that exited on its own did so, for a verdict read after its
// log is gone.
func (p *Process) LastError() string {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return fmt.Sprintf("(unable to read its log: %v)", err)
	}
	b = b[min(int(p.from), len(b)):]
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "level=ERROR") {
			return lines[i]
		}
	}
	return lines[len(lines)-1]
}
