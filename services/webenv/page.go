package webenv

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// pageConfig is WOB_CONFIG, the page core's configuration, embedded in every
// page as JSON.
type pageConfig struct {
	// Mode is "start" for a task's start page (the MiniWoB protocol: the
	// harness starts each episode) and "episode" for a page of a running
	// episode of a multi-page site.
	Mode      string       `json:"mode"`
	Family    string       `json:"family"`
	Site      string       `json:"site"`
	Episode   string       `json:"ep,omitempty"`
	MaxTimeMs int64        `json:"maxTimeMs"`
	ElapsedMs int64        `json:"elapsedMs,omitempty"`
	Score     *Score       `json:"score,omitempty"`
	Async     *ClientAsync `json:"async,omitempty"`
}

type pageData struct {
	Title       string
	Site        string
	Viewport    catalog.Size
	Instruction string
	Area        string
	Config      pageConfig
	StartPage   bool
}

// renderPage writes a task page: the MiniWoB layout (#wrap holding #query
// and #area), the shared core and theme, and WOB_CONFIG.
func renderPage(w http.ResponseWriter, status int, d pageData) {
	cfg, err := json.Marshal(d.Config) // escapes <, > and &, so it is safe in <script>
	if err != nil {
		writeError(w, http.StatusInternalServerError, "unable to encode page config")
		return
	}
	var b hb
	b.f(`<!doctype html><html><head><meta charset="utf-8">`)
	b.f(`<meta name="wob-viewport" content="%s">`, d.Viewport)
	b.f(`<title>%s</title>`, esc(d.Title))
	b.f(`<link rel="stylesheet" href="/static/core.css"><link rel="stylesheet" href="/static/themes.css">`)
	b.f(`<script>var WOB_CONFIG = %s;</script>`, cfg)
	b.f(`<script src="/static/core.js"></script>`)
	if d.StartPage {
		// genProblem is the page's own, as the protocol wants: ours asks the
		// server for the problem of (family, site, seed).
		b.f(`<script>function genProblem() { core.loadServerProblem(); }</script>`)
	}
	b.f(`</head><body class="site-%s">`, esc(d.Site))
	b.f(`<div id="wrap" style="width:%dpx;min-height:%dpx">`, d.Viewport.W, d.Viewport.H)
	b.f(`<div id="query">%s</div><div id="area">%s</div></div></body></html>`, esc(d.Instruction), d.Area)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

func (s *Server) asyncConfig() *ClientAsync {
	if !s.cfg.profile.Client.Enabled {
		return nil
	}
	c := s.cfg.profile.Client
	return &c
}

func ms(d time.Duration) int64 { return d.Milliseconds() }
