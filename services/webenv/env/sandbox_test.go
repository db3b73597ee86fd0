package env

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The modes: off keeps this process's user without the sandbox; auto runs
// a root process's browser as SandboxUID; anything else is an error.
func TestIsolation(t *testing.T) {
	if iso, err := isolation(SandboxOff); err != nil || iso.UID != -1 || iso.Sandbox || iso.Why == "" {
		t.Errorf("off: %+v, %v", iso, err)
	}
	iso, err := isolation(SandboxAuto)
	if err != nil {
		t.Fatal(err)
	}
	if root := os.Geteuid() == 0; root != (iso.UID == SandboxUID) {
		t.Errorf("auto as uid %d: %+v", os.Geteuid(), iso)
	}
	if !iso.Sandbox && iso.Why == "" {
		t.Errorf("auto without the sandbox and no reason: %+v", iso)
	}
	if _, err := isolation("maybe"); err == nil || !strings.Contains(err.Error(), "invalid browser sandbox") {
		t.Errorf("maybe: %v", err)
	}
}

// A user-data dir under a directory other users cannot pass is refused
// with what to do, before Chromium fails on it.
func TestSandboxDirUnreachable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	tmp := t.TempDir()
	// The test's own temp dirs (0700) let others through, as /tmp does.
	for _, d := range []string{tmp, filepath.Dir(tmp)} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	closed := filepath.Join(tmp, "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(closed, "ud")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	err := sandboxDir(dir, SandboxUID)
	if err == nil || !strings.Contains(err.Error(), "does not let other users through") {
		t.Fatalf("%v", err)
	}
	if err := os.Chmod(closed, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := sandboxDir(dir, SandboxUID); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi == nil || ownerOf(fi) != SandboxUID {
		t.Errorf("the dir is not the sandbox user's")
	}
}
