//go:build linux

package cpuset

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Supported reports whether pinning works on this OS.
const Supported = true

// Reserve pins every thread of the process to every core but core. New
// threads inherit their creator's set, and so do child processes: call it
// before the browsers start, and Own on the thread that keeps core.
func Reserve(core int) error {
	if err := check(core); err != nil {
		return err
	}
	var rest unix.CPUSet
	for c := range runtime.NumCPU() {
		if c != core {
			rest.Set(c)
		}
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("unable to list the process's threads: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		// A thread that ended since the listing is no matter.
		if err := unix.SchedSetaffinity(tid, &rest); err != nil && err != unix.ESRCH {
			return fmt.Errorf("unable to pin thread %d off core %d: %w", tid, core, err)
		}
	}
	return nil
}

// Own pins the calling OS thread (lock the goroutine to it first) to core.
func Own(core int) error {
	if err := check(core); err != nil {
		return err
	}
	var one unix.CPUSet
	one.Set(core)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		return fmt.Errorf("unable to pin the thread to core %d: %w", core, err)
	}
	return nil
}

// Of returns the cores the calling thread may run on.
func Of() ([]int, error) {
	var s unix.CPUSet
	if err := unix.SchedGetaffinity(0, &s); err != nil {
		return nil, fmt.Errorf("unable to read the thread's cores: %w", err)
	}
	var out []int
	for c := range 1024 {
		if s.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

func check(core int) error {
	if n := runtime.NumCPU(); core < 0 || core >= n || n < 2 {
		return fmt.Errorf("unable to reserve core %d: the machine has %d (want 0..%d, and at least 2)", core, n, n-1)
	}
	return nil
}
