package dashboard

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/asyncwebrl/asyncwebrl/analytics"
)

//go:embed static/*.html
var static embed.FS

// Option changes a Dashboard.
type Option func(*Dashboard)

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(d *Dashboard) { d.log = l } }

// WithRefresh sets how often the page polls for new data (default 5s).
func WithRefresh(every time.Duration) Option { return func(d *Dashboard) { d.refresh = every } }

// Dashboard is the dashboard service (app.Service).
type Dashboard struct {
	addr    string
	ch      analytics.Config
	log     *slog.Logger
	refresh time.Duration

	srv  *http.Server
	ln   net.Listener
	done chan struct{}

	mu   sync.Mutex
	conn driver.Conn
}

// New returns a dashboard serving on addr, reading the ClickHouse database
// ch.Database.
func New(addr string, ch analytics.Config, opts ...Option) *Dashboard {
	d := &Dashboard{addr: addr, ch: ch, log: slog.New(slog.DiscardHandler), refresh: 5 * time.Second}
	for _, o := range opts {
		o(d)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.servePage("static/index.html"))
	mux.HandleFunc("GET /api/charts", d.serveCharts)
	mux.HandleFunc("GET /episodes", d.servePage("static/episodes.html"))
	mux.HandleFunc("GET /api/episodes", d.serveEpisodes)
	mux.HandleFunc("GET /api/episode", d.serveEpisode)
	mux.HandleFunc("GET /api/frames/{hash}", d.serveFrame)
	d.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return d
}

// Name implements app.Service.
func (d *Dashboard) Name() string { return "dashboard" }

// Start binds the listener (a port in use is a start error).
func (d *Dashboard) Start(context.Context) error {
	ln, err := net.Listen("tcp", d.addr)
	if err != nil {
		return fmt.Errorf("unable to listen on dashboard address %s: %w", d.addr, err)
	}
	d.ln = ln
	d.done = make(chan struct{})
	go func() {
		defer close(d.done)
		if err := d.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("dashboard server stopped", "err", err)
		}
	}()
	d.log.Info("dashboard listening", "url", "http://"+ln.Addr().String()+"/")
	return nil
}

// Addr is the bound address (useful with port 0).
func (d *Dashboard) Addr() string {
	if d.ln == nil {
		return d.addr
	}
	return d.ln.Addr().String()
}

// Stop finishes in-flight requests under ctx and closes the connection.
func (d *Dashboard) Stop(ctx context.Context) error {
	if d.ln == nil {
		return nil
	}
	err := d.srv.Shutdown(ctx)
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil {
		err = errors.Join(err, d.conn.Close())
		d.conn = nil
	}
	return err
}

// connection returns the shared ClickHouse connection, opening it on first
// use or after it was dropped.
func (d *Dashboard) connection(ctx context.Context) (driver.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil {
		return d.conn, nil
	}
	conn, err := analytics.Open(ctx, d.ch)
	if err != nil {
		if analytics.IsUnknownDatabase(err) {
			return nil, fmt.Errorf("database %s does not exist yet: is the recorder running? (%w)", d.ch.Database, err)
		}
		return nil, err
	}
	d.conn = conn
	return conn, nil
}

// dropConnection forgets a connection that failed, so the next request
// dials again (ClickHouse restarted).
func (d *Dashboard) dropConnection(conn driver.Conn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn == conn {
		_ = d.conn.Close()
		d.conn = nil
	}
}

// servePage serves an embedded page: no network access beyond this server.
func (d *Dashboard) servePage(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		b, err := static.ReadFile(name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:")
		_, _ = w.Write(b)
	}
}
