package procstat

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestStatOfThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc")
	}
	f := Stat(os.Getpid())
	if f == nil {
		t.Fatal("no stat for this process")
	}
	if got := Int(f, PPID); got != os.Getppid() {
		t.Errorf("ppid %d, want %d", got, os.Getppid())
	}
	if Stat(-1) != nil {
		t.Error("a stat for pid -1")
	}
}

func TestParseMachine(t *testing.T) {
	// A /proc/stat of two cores: the "cpu" line sums them.
	const stat = `cpu  100 5 50 800 20 3 2 0 40 0
cpu0 50 2 25 400 10 1 1 0 20 0
cpu1 50 3 25 400 10 2 1 0 20 0
intr 12345
`
	got := parseMachine(strings.NewReader(stat))
	// busy: user 100 + nice 5 + system 50 + irq 3 + softirq 2 + steal 0;
	// idle 800 and iowait 20 are idle; guest 40 is inside user already.
	if want := (Ticks{Busy: 160, Total: 980}); got != want {
		t.Fatalf("parseMachine = %+v, want %+v", got, want)
	}
	if got := parseMachine(strings.NewReader("cpu  1 x 3 4 5\n")); got != (Ticks{}) {
		t.Errorf("a malformed line parsed as %+v", got)
	}
	if got := parseMachine(strings.NewReader("intr 1\n")); got != (Ticks{}) {
		t.Errorf("no cpu line parsed as %+v", got)
	}
	if u := Util(Ticks{Busy: 100, Total: 1000}, Ticks{Busy: 190, Total: 1100}); u != 0.9 {
		t.Errorf("Util = %v, want 0.9", u)
	}
	if u := Util(Ticks{Busy: 100, Total: 1000}, Ticks{Busy: 100, Total: 1000}); u != 0 {
		t.Errorf("Util over no time = %v, want 0", u)
	}
}

func TestMachineOnThisHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc")
	}
	m := Machine()
	if m.Total == 0 || m.Busy > m.Total {
		t.Fatalf("Machine() = %+v: want a total and busy within it", m)
	}
}

// A child's time counts in its parent's tree, while it runs and once
// reaped.
func TestTreeCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc")
	}
	if TreeCPU(-1) != 0 {
		t.Error("time for pid -1")
	}
	before := TreeCPU(os.Getpid())
	// A child that burns about 0.3 s of CPU, then exits and is reaped.
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done")
	if err := cmd.Run(); err != nil {
		t.Skip("no sh:", err)
	}
	own := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	after := TreeCPU(os.Getpid())
	// Ticks are 10 ms: the tree gained the child's time, to a tick.
	if got := after - before; got+20*time.Millisecond < own {
		t.Errorf("the tree gained %s, the reaped child used %s", got, own)
	}
}

// A child process counts in its parent's usage: one more process, its
// threads, its memory and its open files, and its command name.
func TestTreeUsage(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc")
	}
	if u := TreeUsage(-1, ""); u != (Usage{}) {
		t.Errorf("usage of pid -1: %+v", u)
	}
	before := TreeUsage(os.Getpid(), "sleep")
	if before.Processes < 1 || before.Threads < 1 || before.RSS <= 0 || before.FDs < 3 {
		t.Fatalf("this process's usage %+v", before)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// sleep's comm is set once it execs: wait for it.
	var with Usage
	for range 100 {
		if with = TreeUsage(os.Getpid(), "sleep"); with.Named == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if with.Processes != before.Processes+1 || with.Named != 1 || with.RSS <= before.RSS || with.Threads <= before.Threads {
		t.Errorf("with a child %+v, before %+v: want one more process, named sleep, more memory and threads", with, before)
	}
	if d := Descendants(cmd.Process.Pid); len(d) != 1 || d[0] != cmd.Process.Pid {
		t.Errorf("descendants of the child %v", d)
	}
}
