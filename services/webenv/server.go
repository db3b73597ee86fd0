package webenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// Server serves the task pages. It is the webenv target's app.Service.
type Server struct {
	cfg      config
	log      *slog.Logger
	episodes *store
	third    *thirdParty
	miniwob  *miniwobMount
	handler  http.Handler
	now      func() time.Time

	mu  sync.Mutex
	ln  net.Listener
	srv *http.Server
}

// New builds a server; Start makes it listen.
func New(opts ...Option) (*Server, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.split == "" {
		cfg.split = catalog.SplitTrain
	}
	if _, err := catalog.ParseSplit(string(cfg.split)); err != nil {
		return nil, fmt.Errorf("unable to build webenv server: %w", err)
	}
	if cfg.profile.Server == nil {
		cfg.profile.Server = NoDelay{}
	}
	if cfg.maxEpisodes <= 0 {
		cfg.maxEpisodes = 1
	}
	suite, err := catalog.ParseSuite(string(cfg.suite))
	if err != nil {
		return nil, fmt.Errorf("unable to build webenv server: %w", err)
	}
	cfg.suite = suite
	s := &Server{cfg: cfg, log: cfg.log.With("service", "webenv"), episodes: newStore(cfg.maxEpisodes, cfg.episodeTTL), now: time.Now}
	if cfg.thirdPartyDir != "" {
		tp, err := loadThirdParty(cfg.thirdPartyDir)
		if err != nil {
			return nil, fmt.Errorf("unable to build webenv server: %w", err)
		}
		s.third = tp
	}
	if suite.HasMiniWoB() {
		m, err := loadMiniWoB(cfg.miniwobDir)
		if err != nil {
			return nil, fmt.Errorf("unable to build webenv server: %w", err)
		}
		s.miniwob = m
	}
	s.handler = recoverMiddleware(s.log, latencyMiddleware(newDelaySampler(cfg.profile.Server, cfg.latencySeed), s.routes()))
	return s, nil
}

var (
	_ app.Service       = (*Server)(nil)
	_ app.HealthChecker = (*Server)(nil)
)

// Name implements app.Service.
func (s *Server) Name() string { return "webenv" }

// Healthy implements app.HealthChecker: the server is healthy while it
// listens.
func (s *Server) Healthy(context.Context) error {
	if s.Addr() == "" {
		return errors.New("webenv is not listening")
	}
	return nil
}

// Handler returns the server's HTTP handler (for tests with httptest).
func (s *Server) Handler() http.Handler { return s.handler }

// Split returns the split served.
func (s *Server) Split() catalog.Split { return s.cfg.split }

// Profile returns the latency profile.
func (s *Server) Profile() Profile { return s.cfg.profile }

// Start listens and serves in a goroutine; it returns once the listener is
// bound.
func (s *Server) Start(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.addr)
	if err != nil {
		return fmt.Errorf("unable to listen on %s: %w", s.cfg.addr, err)
	}
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.ln, s.srv = ln, srv
	s.mu.Unlock()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("serve failed", "err", err)
		}
	}()
	s.log.Info("serving", "url", s.URL(), "split", s.cfg.split, "suite", s.cfg.suite, "profile", s.cfg.profile.Name,
		"families", len(s.Families()))
	return nil
}

// Stop shuts the server down, waiting for requests in flight until ctx ends.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
		return fmt.Errorf("unable to shut down webenv: %w", err)
	}
	return nil
}

// Addr returns the bound address ("" before Start).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// URL returns the server's base URL ("" before Start).
func (s *Server) URL() string {
	if a := s.Addr(); a != "" {
		return "http://" + a
	}
	return ""
}

// Suite returns the suite served.
func (s *Server) Suite() catalog.Suite { return s.cfg.suite }

// Families lists the suite's families and the mounted third-party pages.
func (s *Server) Families() []catalog.FamilyInfo {
	out := catalog.SuiteFamilies(s.cfg.suite)
	if s.third != nil {
		out = append(out, s.third.families()...)
	}
	return out
}

// PrintFamilies writes Families in format "text" or "json".
func (s *Server) PrintFamilies(w io.Writer, format string) error {
	return catalog.PrintFamilies(w, format, s.Families())
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.handleIndex)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /api/families", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Families())
	})
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticHandler()))
	// A page that makes no request of its own when acted on (MiniWoB++'s)
	// makes this one per action (env.WithRequestPerAction), so the latency
	// profile delays its actions as it delays the built-in pages' requests.
	mux.HandleFunc("GET /api/wait", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /t/{family}/{site}", s.handleStartPage)
	mux.HandleFunc("GET /t/{family}/{site}/{$}", s.handleStartPage)
	mux.HandleFunc("POST /api/episodes", s.handleCreateEpisode)
	mux.HandleFunc("GET /api/tasks/{family}/{site}/{seed}", s.handleTaskInfo)
	mux.HandleFunc("GET /api/e/{id}", s.handleScore)
	mux.HandleFunc("POST /api/e/{id}/events", s.handleEvents)
	mux.HandleFunc("/e/{id}/{path...}", s.handleEpisodePage)
	if s.third != nil {
		mux.Handle("GET /thirdparty/", http.StripPrefix("/thirdparty/", s.third.handler()))
	}
	if s.miniwob != nil {
		mux.Handle("GET /miniwob/", http.StripPrefix("/miniwob", s.miniwob.handler()))
	} else {
		mux.HandleFunc("GET /miniwob/", miniwobNotMounted)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such page: %s %s", r.Method, r.URL.Path))
	})
	return mux
}
