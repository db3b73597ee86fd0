package webenv

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// The MiniWoB++ suite: the benchmark's own pages (PyPI's miniwob wheel,
// fetched by `infra/setup.sh miniwob` into .run/miniwob/html and never
// committed) served exactly as published, with their relative paths intact:
// the html tree is mounted whole under /miniwob/, so the task X is
// /miniwob/miniwob/X.html and loads ../core/core.js. Episodes follow the
// package's core.js (the env seeds with Math.seedrandom and restarts in
// place); the page scores itself (WOB_RAW_REWARD_GLOBAL in [-1, 1]).

// miniwobMount serves the benchmark's html tree as published.
type miniwobMount struct {
	dir string
}

// ErrMiniWoBMissing is the class of errors for a missing or incomplete
// MiniWoB++ page directory.
var ErrMiniWoBMissing = errors.New("the MiniWoB++ pages are missing")

// loadMiniWoB checks that dir is the html tree of miniwob 1.1.0: every task
// of the table has its page, so a listed task is never a 404.
func loadMiniWoB(dir string) (*miniwobMount, error) {
	hint := fmt.Sprintf("run `make setup` (or infra/setup.sh miniwob) to fetch miniwob==%s into it, or point -miniwob-dir at the wheel's miniwob/html", catalog.MiniWoBVersion)
	if dir == "" {
		return nil, fmt.Errorf("unable to mount MiniWoB++: no directory given: %w", ErrMiniWoBMissing)
	}
	pages, err := filepath.Glob(filepath.Join(dir, "miniwob", "*.html"))
	if err != nil || len(pages) == 0 {
		return nil, fmt.Errorf("unable to mount MiniWoB++: no pages in %s: %w; %s", filepath.Join(dir, "miniwob"), ErrMiniWoBMissing, hint)
	}
	if _, err := os.Stat(filepath.Join(dir, "core", "core.js")); err != nil {
		return nil, fmt.Errorf("unable to mount MiniWoB++: no core/core.js in %s: %w; %s", dir, ErrMiniWoBMissing, hint)
	}
	var missing []string
	for _, t := range catalog.MiniWoBTasks() {
		if _, err := os.Stat(filepath.Join(dir, "miniwob", t.Name+".html")); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, t.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("unable to mount MiniWoB++: %s lacks %d task pages (%s...), not miniwob %s: %w; %s",
			dir, len(missing), missing[0], catalog.MiniWoBVersion, ErrMiniWoBMissing, hint)
	}
	return &miniwobMount{dir: dir}, nil
}

// MiniWoBPath is the server path of a task's page.
func MiniWoBPath(task string) string {
	return "/miniwob/miniwob/" + strings.TrimPrefix(task, catalog.MiniWoBPrefix) + ".html"
}

// handler serves the tree; a missing file is a 404 JSON that names it, and
// a missing task page says where the task list is.
func (m *miniwobMount) handler() http.Handler {
	files := http.FileServer(http.Dir(m.dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clean := filepath.Clean("/" + r.URL.Path)
		if st, err := os.Stat(filepath.Join(m.dir, filepath.FromSlash(clean))); err != nil || st.IsDir() {
			if task, ok := strings.CutPrefix(clean, "/miniwob/"); ok && strings.HasSuffix(task, ".html") {
				writeError(w, http.StatusNotFound, fmt.Sprintf("no MiniWoB++ task %q (asyncwebrl webenv families --suite miniwob lists them)", strings.TrimSuffix(task, ".html")))
				return
			}
			writeError(w, http.StatusNotFound, fmt.Sprintf("no MiniWoB++ file %s", clean))
			return
		}
		files.ServeHTTP(w, r)
	})
}

// miniwobNotMounted answers /miniwob/ on a server that does not serve the
// suite.
func miniwobNotMounted(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, "MiniWoB++ is not served here: start webenv with -suite=miniwob or -suite=all")
}
