package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveLibraryPath(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.so")
	if _, err := ResolveLibraryPath(missing); err == nil || !strings.Contains(err.Error(), "run infra/setup.sh onnxruntime") {
		t.Fatalf("explicit missing path: %v", err)
	}
	t.Setenv(EnvLibraryPath, missing)
	if _, err := ResolveLibraryPath(""); err == nil || !strings.Contains(err.Error(), EnvLibraryPath) {
		t.Fatalf("missing env path: %v", err)
	}
	lib := filepath.Join(t.TempDir(), "lib.so")
	if err := os.WriteFile(lib, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvLibraryPath, lib)
	if p, err := ResolveLibraryPath(""); err != nil || p != lib {
		t.Fatalf("env path: %q, %v", p, err)
	}
	if p, err := ResolveLibraryPath(lib); err != nil || p != lib {
		t.Fatalf("explicit path: %q, %v", p, err)
	}
}

// TestResolveLibraryPathWalksUpToTheRepoRoot finds .run/lib from a package
// directory, and stops at go.mod.
func TestResolveLibraryPathWalksUpToTheRepoRoot(t *testing.T) {
	t.Setenv(EnvLibraryPath, "")
	root := t.TempDir()
	pkg := filepath.Join(root, "services", "policy")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	if _, err := ResolveLibraryPath(""); err == nil || !strings.Contains(err.Error(), "run infra/setup.sh onnxruntime") {
		t.Fatalf("no library: %v", err)
	}
	lib := filepath.Join(root, relLibraryPath)
	if err := os.MkdirAll(filepath.Dir(lib), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lib, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := ResolveLibraryPath(""); err != nil || p != lib {
		t.Fatalf("walk up: %q, %v, want %q", p, err, lib)
	}
}
