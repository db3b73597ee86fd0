package omp_test

import (
	"runtime"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/omp"
)

// TestSetThreadsIsPerThread: the setting holds on the thread that made it
// and leaves the others' alone, which is why the learner makes it on its
// training thread.
func TestSetThreadsIsPerThread(t *testing.T) {
	other := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		other <- omp.Threads()
	}()
	before := <-other

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	omp.SetThreads(1)
	if n := omp.Threads(); n != 1 {
		t.Fatalf("after SetThreads(1) the thread's team is %d", n)
	}
	omp.SetThreads(0)
	if n := omp.Threads(); n != 1 {
		t.Fatalf("SetThreads(0) gave a team of %d, want 1", n)
	}
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		other <- omp.Threads()
	}()
	if after := <-other; after != before {
		t.Fatalf("another thread's team went from %d to %d", before, after)
	}
}
