package webenv

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// ThirdPartyPrefix starts the family name of a mounted third-party page:
// "thirdparty/<name>" is the page <dir>/<name>.html, served at
// /thirdparty/<name>.html and driven like any MiniWoB page.
const ThirdPartyPrefix = "thirdparty/"

// ThirdPartySite is the single site of a third-party page. Third-party pages
// are outside the train/test split by site: they are served in every split,
// and a run that needs a split of them mounts different directories.
const ThirdPartySite = "default"

type thirdParty struct {
	dir   string
	names []string
}

func loadThirdParty(dir string) (*thirdParty, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("unable to read third-party dir %s: %w", dir, err)
	}
	tp := &thirdParty{dir: dir}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".html"); ok && !e.IsDir() {
			tp.names = append(tp.names, name)
		}
	}
	slices.Sort(tp.names)
	return tp, nil
}

func (tp *thirdParty) families() []catalog.FamilyInfo {
	out := make([]catalog.FamilyInfo, 0, len(tp.names))
	for _, n := range tp.names {
		out = append(out, catalog.FamilyInfo{
			Name: ThirdPartyPrefix + n, Tier: catalog.Unrated, Desc: "third-party page " + filepath.Join(tp.dir, n+".html"),
			Viewport: catalog.ViewportSmall, Sites: []catalog.SiteInfo{{Name: ThirdPartySite, Split: catalog.SplitAll}}, ThirdParty: true,
		})
	}
	return out
}

// handler serves the directory; a missing file is a 404 JSON like any other.
func (tp *thirdParty) handler() http.Handler {
	files := http.FileServer(http.Dir(tp.dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clean := filepath.Clean("/" + r.URL.Path)
		if st, err := os.Stat(filepath.Join(tp.dir, filepath.FromSlash(clean))); err != nil || st.IsDir() {
			writeError(w, http.StatusNotFound, fmt.Sprintf("no third-party page %s", clean))
			return
		}
		files.ServeHTTP(w, r)
	})
}
