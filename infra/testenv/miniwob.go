package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// MiniWoBDir is where infra/setup.sh unpacked the benchmark's pages: the
// ASYNCWEBRL_MINIWOB_DIR variable, else <run dir>/miniwob/html with the run
// dir ASYNCWEBRL_RUN_DIR or the repository's .run. It fails t when the pages
// are not there.
func MiniWoBDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("ASYNCWEBRL_MINIWOB_DIR")
	if dir == "" {
		run := os.Getenv("ASYNCWEBRL_RUN_DIR")
		if run == "" {
			run = filepath.Join(RepoDir(t), ".run")
		}
		dir = filepath.Join(run, "miniwob", "html")
	}
	if _, err := os.Stat(filepath.Join(dir, "miniwob", "click-test.html")); err != nil {
		t.Fatalf("no MiniWoB++ pages in %s: run `make setup` (or infra/setup.sh miniwob) to fetch the benchmark, or set ASYNCWEBRL_MINIWOB_DIR", dir)
	}
	return dir
}
