package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func moduleZip(t *testing.T, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "m.zip")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The hash of a known module zip: gotch v0.9.1's, pinned in
// infra/gotch/common.sh, checked when this machine has the zip.
func TestHashZipMatchesGoSum(t *testing.T) {
	gomodcache := os.Getenv("GOMODCACHE")
	if gomodcache == "" {
		gomodcache = filepath.Join(os.Getenv("HOME"), "go", "pkg", "mod")
	}
	p := filepath.Join(gomodcache, "cache", "download", "github.com", "sugarme", "gotch", "@v", "v0.9.1.zip")
	zr, err := zip.OpenReader(p)
	if err != nil {
		t.Skipf("no gotch v0.9.1 zip here: %v", err)
	}
	defer zr.Close()
	got, err := hashZip(&zr.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if want := "h1:J6JCE1C2AfPmM1xk0p46LdzWtfNvbvZZnWdkj9v54jo="; got != want {
		t.Fatalf("hashZip = %s, want %s (go.sum's)", got, want)
	}
}

func TestExtractChecksSumAndStripsPrefix(t *testing.T) {
	z := moduleZip(t, map[string]string{"example.com/m@v1.0.0/go.mod": "module example.com/m\n", "example.com/m@v1.0.0/a/b.go": "package a\n"})
	out := filepath.Join(t.TempDir(), "m")
	err := runExtract([]string{"-zip", z, "-sum", "h1:wrong", "-out", out})
	if err == nil || !strings.Contains(err.Error(), "want h1:wrong") {
		t.Fatalf("extract with a wrong sum: %v, want a hash mismatch", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("extract with a wrong sum wrote the directory")
	}
	zr, err := zip.OpenReader(z)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := hashZip(&zr.Reader)
	zr.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := runExtract([]string{"-zip", z, "-sum", sum, "-out", out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "a", "b.go"))
	if err != nil || string(b) != "package a\n" {
		t.Fatalf("a/b.go = %q, %v", b, err)
	}
	if err := runExtract([]string{"-zip", z, "-sum", sum, "-out", out}); err == nil {
		t.Fatal("extract into an existing directory succeeded")
	}
}
