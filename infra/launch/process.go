package launch

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Process is a component started by StartProcess.
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

// StartProcess runs bin with args and, when env is not nil, with env added
// to this process's environment; its output is appended to dir/name.log,
// so a restarted component continues its predecessor's log. The caller
// kills what it started.
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

// Lines returns the lines of the process's log that hold any of subs.
func (p *Process) Lines(subs ...string) ([]string, error) {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return nil, fmt.Errorf("unable to read the log of %s: %w", p.Log, err)
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
	return out, nil
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
