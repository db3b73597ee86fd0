package webenv

import (
	"embed"
	"io/fs"
	"net/http"
)

// staticFS holds the page core (core.js, core.css) and the site themes
// (themes.css), served under /static/.
//
//go:embed static
var staticFS embed.FS

func staticHandler() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		// The directory is embedded at build time; this cannot happen.
		return http.NotFoundHandler()
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The core changes only with the binary: let browsers cache it, so a
		// latency profile delays the task, not the same script every reset.
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}
