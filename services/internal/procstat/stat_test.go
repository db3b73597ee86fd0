package procstat

import (
	"os"
	"runtime"
	"testing"
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
