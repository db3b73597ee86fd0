package webenv

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

func (s *Server) handleIndex(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"service":  "asyncwebrl webenv",
		"split":    s.cfg.split,
		"suite":    s.cfg.suite,
		"profile":  s.cfg.profile.Name,
		"families": s.Families(),
		"start":    "/t/<family>/<site>/ (MiniWoB protocol: core.endEpisode(0); Math.seedrandom(seed); core.startEpisodeReal())",
	})
}

// resolve checks that (family, site) exists and is served.
func (s *Server) resolve(familyName, site string) (catalog.Family, error) {
	f, _, ok := family(familyName)
	if !ok {
		return catalog.Family{}, &ErrNotFound{Reason: fmt.Sprintf("unknown task family %q", familyName)}
	}
	if _, ok := catalog.SiteByName(site); !ok {
		return catalog.Family{}, &ErrNotFound{Reason: fmt.Sprintf("unknown site %q of family %s (sites: %s)", site, familyName, siteNames())}
	}
	if split := catalog.SiteSplit(familyName, site); !s.cfg.split.Serves(split) {
		return catalog.Family{}, &ErrNotFound{Reason: fmt.Sprintf("site %q of family %s is in the %s split, which this %s server does not serve", site, familyName, split, s.cfg.split)}
	}
	return f, nil
}

func siteNames() string {
	var names []string
	for _, s := range catalog.Sites {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// notFoundOr writes a 404 for ErrNotFound and a 400 for anything else.
func notFoundOr(w http.ResponseWriter, err error) {
	var nf *ErrNotFound
	if errors.As(err, &nf) {
		writeError(w, http.StatusNotFound, nf.Reason)
		return
	}
	writeError(w, http.StatusBadRequest, err.Error())
}

func (s *Server) handleStartPage(w http.ResponseWriter, r *http.Request) {
	f, err := s.resolve(r.PathValue("family"), r.PathValue("site"))
	if err != nil {
		notFoundOr(w, err)
		return
	}
	renderPage(w, http.StatusOK, pageData{
		Title:     "asyncwebrl · " + f.Name,
		Site:      r.PathValue("site"),
		Viewport:  f.Viewport,
		StartPage: true,
		Config: pageConfig{Mode: "start", Family: f.Name, Site: r.PathValue("site"),
			MaxTimeMs: ms(f.MaxTime), Async: s.asyncConfig()},
	})
}

// parseSeed accepts a JSON number or string holding a non-negative integer.
func parseSeed(raw json.RawMessage) (int64, error) {
	str := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	seed, err := strconv.ParseInt(str, 10, 64)
	if err != nil || seed < 0 {
		return 0, &ErrNotFound{Reason: fmt.Sprintf("unknown seed %s: seeds are non-negative integers", truncate(string(raw), 40))}
	}
	return seed, nil
}

type createRequest struct {
	Family string          `json:"family"`
	Site   string          `json:"site"`
	Seed   json.RawMessage `json:"seed"`
}

type createResponse struct {
	ID          string `json:"id"`
	Instruction string `json:"instruction"`
	HTML        string `json:"html"`
	MaxTimeMs   int64  `json:"maxTimeMs"`
	Score       Score  `json:"score"`
	// Home is the URL of a multi-page site's first page; the core gives the
	// start page this URL (history.replaceState), so that go_back to it
	// loads the episode's page rather than a fresh start page.
	Home string `json:"home,omitempty"`
}

func (s *Server) handleCreateEpisode(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<14)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "unable to decode episode request: "+err.Error())
		return
	}
	if _, err := s.resolve(req.Family, req.Site); err != nil {
		notFoundOr(w, err)
		return
	}
	seed, err := parseSeed(req.Seed)
	if err != nil {
		notFoundOr(w, err)
		return
	}
	p, err := Generate(req.Family, req.Site, seed)
	if err != nil {
		notFoundOr(w, err)
		return
	}
	now := s.now()
	ep := newEpisode(p, now)
	s.episodes.add(ep, now)
	base := "/e/" + ep.ID
	html := strings.ReplaceAll(p.HTML, "{{EP}}", base)
	var score Score
	home := ""
	if p.Pages != nil && html == "" {
		res, sc := ep.Page(PageRequest{Base: base, Method: "GET", Path: "/", Query: url.Values{}}, now)
		html, score, home = res.HTML, sc, base+"/"
	} else {
		score = ep.Score(now)
	}
	writeJSON(w, http.StatusOK, createResponse{ID: ep.ID, Instruction: p.Instruction, HTML: html,
		MaxTimeMs: ms(p.MaxTime), Score: score, Home: home})
}

type taskInfo struct {
	Family      string        `json:"family"`
	Site        string        `json:"site"`
	Split       catalog.Split `json:"split"`
	Seed        int64         `json:"seed"`
	Tier        catalog.Tier  `json:"tier"`
	Instruction string        `json:"instruction"`
	Facts       []string      `json:"facts"`
	Steps       int           `json:"oracle_steps"`
}

// handleTaskInfo describes a task without its solution: the instruction and
// the names of the rubric's facts.
func (s *Server) handleTaskInfo(w http.ResponseWriter, r *http.Request) {
	fam, site := r.PathValue("family"), r.PathValue("site")
	if _, err := s.resolve(fam, site); err != nil {
		notFoundOr(w, err)
		return
	}
	seed, err := parseSeed(json.RawMessage(r.PathValue("seed")))
	if err != nil {
		notFoundOr(w, err)
		return
	}
	p, err := Generate(fam, site, seed)
	if err != nil {
		notFoundOr(w, err)
		return
	}
	info := taskInfo{Family: fam, Site: site, Split: catalog.SiteSplit(fam, site), Seed: seed, Tier: p.Tier,
		Instruction: p.Instruction, Steps: len(p.Plan)}
	for _, f := range p.Facts {
		info.Facts = append(info.Facts, f.Name)
	}
	writeJSON(w, http.StatusOK, info)
}

func (s *Server) episode(w http.ResponseWriter, id string) (*Episode, bool) {
	ep, ok := s.episodes.get(id)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("unknown episode %q (finished long ago, or never started)", truncate(id, 40)))
	}
	return ep, ok
}

func (s *Server) handleScore(w http.ResponseWriter, r *http.Request) {
	if ep, ok := s.episode(w, r.PathValue("id")); ok {
		writeJSON(w, http.StatusOK, ep.Score(s.now()))
	}
}

type eventsRequest struct {
	Events []Event `json:"events"`
}

func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	ep, ok := s.episode(w, r.PathValue("id"))
	if !ok {
		return
	}
	var req eventsRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<18)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "unable to decode events: "+err.Error())
		return
	}
	if len(req.Events) > maxEventsPerBatch {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("too many events in one batch: %d > %d", len(req.Events), maxEventsPerBatch))
		return
	}
	writeJSON(w, http.StatusOK, ep.Apply(req.Events, s.now()))
}

func (s *Server) handleEpisodePage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "pages take GET or POST")
		return
	}
	ep, ok := s.episode(w, r.PathValue("id"))
	if !ok {
		return
	}
	p := ep.Problem
	if p.Pages == nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("task family %s has a single page", p.Family))
		return
	}
	base := "/e/" + ep.ID
	req := PageRequest{Base: base, Method: r.Method, Path: "/" + r.PathValue("path"), Query: r.URL.Query(), Form: url.Values{}}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
		if err := r.ParseForm(); err != nil {
			writeError(w, http.StatusBadRequest, "unable to parse form: "+err.Error())
			return
		}
		req.Form = r.PostForm
	}
	now := s.now()
	res, score := ep.Page(req, now)
	switch {
	case res.NotFound:
		writeError(w, http.StatusNotFound, fmt.Sprintf("no page %s on this site", req.Path))
		return
	case res.Redirect != "":
		http.Redirect(w, r, base+res.Redirect, http.StatusSeeOther)
		return
	}
	renderPage(w, http.StatusOK, pageData{
		Title:       "asyncwebrl · " + p.Family,
		Site:        p.Site,
		Viewport:    p.Viewport,
		Instruction: p.Instruction,
		Area:        res.HTML,
		Config: pageConfig{Mode: "episode", Family: p.Family, Site: p.Site, Episode: ep.ID,
			MaxTimeMs: ms(p.MaxTime), ElapsedMs: ms(ep.Elapsed(now)), Score: &score, Async: s.asyncConfig()},
	})
}
