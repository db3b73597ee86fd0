package casstore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreRoundTrip: a blob is named by its sha256, comes back by it, is
// written once (the actor's frame store and lm states rely on it), and a
// tampered or missing blob or a bad name is an error, never wrong bytes.
func TestStoreRoundTrip(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Put([]byte("hidden states"))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256([]byte("hidden states")); h != hex.EncodeToString(sum[:]) {
		t.Fatalf("hash %s is not the sha256 of the bytes", h)
	}
	if h2, err := s.Put([]byte("hidden states")); err != nil || h2 != h {
		t.Fatalf("second put: %q, %v; want %q", h2, err, h)
	}
	entries, _ := os.ReadDir(s.Dir())
	if len(entries) != 1 {
		t.Fatalf("%d files after two puts of one blob, want 1", len(entries))
	}
	b, err := s.Get(h)
	if err != nil || string(b) != "hidden states" {
		t.Fatalf("get: %q, %v", b, err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), h), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(h); !errors.Is(err, ErrCorrupt) {
		t.Errorf("tampered blob: %v, want ErrCorrupt", err)
	}
	for _, bad := range []string{"", "abc", "../../etc/passwd", h[:63] + "g", strings.Repeat("z", 64)} {
		if _, err := s.Get(bad); err == nil {
			t.Errorf("get %q: no error", bad)
		}
	}
	missing := "0000000000000000000000000000000000000000000000000000000000000000"
	if _, err := s.Get(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing blob: %v, want not exist", err)
	}
}
