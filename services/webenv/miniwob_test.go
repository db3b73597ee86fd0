package webenv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// testMiniWoBDir is where infra/setup.sh unpacked the pages: the
// -miniwob-dir variable, else <run dir>/miniwob/html.
func testMiniWoBDir() string {
	if d := os.Getenv("ASYNCWEBRL_MINIWOB_DIR"); d != "" {
		return d
	}
	run := os.Getenv("ASYNCWEBRL_RUN_DIR")
	if run == "" {
		run = filepath.Join("..", "..", ".run")
	}
	return filepath.Join(run, "miniwob", "html")
}

func TestMiniWoBMount(t *testing.T) {
	if _, err := New(WithSuite(catalog.SuiteMiniWoB), WithMiniWoBDir(t.TempDir()), WithLogger(quietLog())); !errors.Is(err, ErrMiniWoBMissing) ||
		!strings.Contains(err.Error(), "make setup") {
		t.Errorf("empty dir: %v, want an error that says to run make setup", err)
	}
	// A builtin server says how to get the suite.
	ts := newTestServer(t)
	if code, m, _ := do(t, "GET", ts.URL+"/miniwob/miniwob/click-test.html", ""); code != 404 || !strings.Contains(m["error"].(string), "-suite=miniwob") {
		t.Errorf("builtin server: %d %v", code, m)
	}
	dir := testMiniWoBDir()
	if _, err := os.Stat(filepath.Join(dir, "miniwob", "click-test.html")); err != nil {
		t.Skipf("no MiniWoB++ pages in %s: run `make setup` (infra/setup.sh miniwob)", dir)
	}
	ts = newTestServer(t, WithSuite(catalog.SuiteMiniWoB), WithMiniWoBDir(dir))
	for path, want := range map[string]int{
		MiniWoBPath("miniwob/click-test"): 200,
		"/miniwob/core/core.js":           200,
		MiniWoBPath("no-such-task"):       404,
		"/miniwob/core/nothing.js":        404,
	} {
		code, m, _ := do(t, "GET", ts.URL+path, "")
		if code != want {
			t.Errorf("GET %s: %d, want %d", path, code, want)
		}
		if path == MiniWoBPath("no-such-task") && !strings.Contains(m["error"].(string), `no MiniWoB++ task "no-such-task"`) {
			t.Errorf("unknown task: %v", m)
		}
	}
}
