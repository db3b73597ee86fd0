//go:build linux

package cpuset

import (
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestReserveAndOwn: after Reserve(0) the process's threads, and a child
// it starts, run off core 0; a thread that Owns it runs on it alone.
func TestReserveAndOwn(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one core: nothing to reserve")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// The test binary stays pinned off core 0: it ends with the package.
	if err := Reserve(0); err != nil {
		t.Fatal(err)
	}
	got, err := Of()
	if err != nil || slices.Contains(got, 0) || len(got) != runtime.NumCPU()-1 {
		t.Fatalf("after Reserve(0) this thread runs on %v, %v", got, err)
	}
	out, err := exec.Command("grep", "Cpus_allowed_list", "/proc/self/status").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "\t0") {
		t.Errorf("a child process may still run on core 0: %s", out)
	}
	done := make(chan []int)
	go func() {
		runtime.LockOSThread() // this thread ends with the goroutine: its core goes with it
		if err := Own(0); err != nil {
			t.Error(err)
		}
		c, _ := Of()
		done <- c
	}()
	if c := <-done; !slices.Equal(c, []int{0}) {
		t.Errorf("the owning thread runs on %v, want [0]", c)
	}
	if err := Reserve(runtime.NumCPU()); err == nil {
		t.Error("Reserve accepted a core the machine has not")
	}
}
