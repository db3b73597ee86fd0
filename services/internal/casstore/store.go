package casstore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Store is a directory of blobs named by their sha256. Writes are atomic
// (temp file + rename) and a blob already there is not written again, so
// identical blobs cost one file and concurrent writers are safe.
type Store struct{ dir string }

// Open creates dir if needed.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("unable to create the store %s: %w", dir, err)
	}
	return &Store{dir: dir}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// Put stores b and returns its hex sha256.
func (s *Store) Put(b []byte) (string, error) {
	sum := sha256.Sum256(b)
	h := hex.EncodeToString(sum[:])
	path := filepath.Join(s.dir, h)
	if _, err := os.Stat(path); err == nil {
		return h, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("unable to check blob %s: %w", h, err)
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-"+h[:16]+"-*")
	if err != nil {
		return "", fmt.Errorf("unable to store blob %s: %w", h, err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("unable to store blob %s: %w", h, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("unable to store blob %s: %w", h, err)
	}
	return h, nil
}

// ErrCorrupt: a stored blob's content does not hash to its name.
var ErrCorrupt = errors.New("blob does not match its sha256")

// Get reads a blob back by its hash and checks it (a blob written by
// another process is trusted no more than an event).
func (s *Store) Get(hash string) ([]byte, error) {
	if len(hash) != 64 {
		return nil, fmt.Errorf("unable to read blob %q: not a sha256", hash)
	}
	want, err := hex.DecodeString(hash)
	if err != nil {
		return nil, fmt.Errorf("unable to read blob %q: not a sha256", hash)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, hash))
	if err != nil {
		return nil, fmt.Errorf("unable to read blob %s: %w", hash, err)
	}
	if sum := sha256.Sum256(b); string(sum[:]) != string(want) {
		return nil, fmt.Errorf("unable to read blob %s: %w", hash, ErrCorrupt)
	}
	return b, nil
}
