package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"regexp"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/cmalloc"
)

// HealthFunc reports nil when the process is healthy.
type HealthFunc func(ctx context.Context) error

// NewRegistry returns a registry with the Go runtime and process collectors.
// Beside the default Go metrics it exports go_gc_heap_live_bytes, the heap
// the last collection marked live: the soak judges a process's Go memory by
// it, because the heap in use swings between that and twice it (GOGC=100)
// with the moment sampled, and that swing grows with any buffer that fills.
// And the C heap's use and free space (cmalloc.Read): resident memory
// outside the Go runtime grows from a leak or from fragmentation, and only
// these tell which.
func NewRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/live:bytes$`)})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "asyncwebrl_c_heap_in_use_bytes",
			Help: "C heap (glibc malloc: libtorch, ONNX Runtime, cgo) in use, mmapped blocks included."},
			func() float64 { return float64(cmalloc.Read().InUse) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "asyncwebrl_c_heap_free_bytes",
			Help: "C heap free inside malloc's heaps: held from the OS, not in use (fragmentation)."},
			func() float64 { return float64(cmalloc.Read().Free) }))
	return r
}

// Server is the admin HTTP server. It is started before every other
// component and stopped after them, so health and profiles stay reachable
// during start-up and shutdown.
type Server struct {
	addr   string
	log    *slog.Logger
	health HealthFunc
	reg    *prometheus.Registry
	srv    *http.Server
	ln     net.Listener
	done   chan struct{}
}

// New returns a server for addr. health is called on every /healthz.
func New(addr string, reg *prometheus.Registry, health HealthFunc, log *slog.Logger) *Server {
	s := &Server{addr: addr, log: log, health: health, reg: reg, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.serveHealth)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return s
}

// Name implements app.Service.
func (s *Server) Name() string { return "admin" }

// Start binds the listener; a port in use is a start error, not a later one.
func (s *Server) Start(context.Context) error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("unable to listen on admin address %s: %w", s.addr, err)
	}
	s.ln = ln
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("admin server stopped", "err", err)
		}
	}()
	s.log.Info("admin server listening", "addr", ln.Addr().String())
	return nil
}

// Addr is the bound address (useful with port 0).
func (s *Server) Addr() string {
	if s.ln == nil {
		return s.addr
	}
	return s.ln.Addr().String()
}

// Stop shuts the server down under ctx's deadline.
func (s *Server) Stop(ctx context.Context) error {
	if s.ln == nil {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}

type healthBody struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	w.Header().Set("Content-Type", "application/json")
	body := healthBody{Status: "ok"}
	switch err := s.health(ctx); {
	case err == nil:
	case app.IsDegraded(err):
		// Still serving and recovering by itself: a probe must not
		// restart it, so the status code stays 200.
		body = healthBody{Status: "degraded", Error: err.Error()}
	default:
		body = healthBody{Status: "unhealthy", Error: err.Error()}
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(body)
}
