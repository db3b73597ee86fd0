package actor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// egress is the browsers' only way out. Every Chromium of the pool starts
// with --proxy-server pointing at it and no bypass for loopback, so every
// request of every target, the executors' tabs and whatever a page opens
// (windows, form posts to _blank, workers, WebSockets), reaches the network
// through it, and only to an allowed origin. Why: the allowlist on CDP
// Fetch sees only the tabs it is installed on and no WebSocket; a hostile
// page's WebSocket, window.open and form post to _blank reached loopback
// ports (TestIntegrationHostilePage, 12-05), where the broker, ClickHouse's
// HTTP interface and the admin ports listen. The Fetch allowlist stays in
// front: it fails a tab's request before it leaves the browser and counts
// it per executor.
type egress struct {
	allow     *allowlist
	onBlocked func(u string)
	log       *slog.Logger
	ln        net.Listener
	srv       *http.Server
	proxy     *httputil.ReverseProxy
}

// startEgress listens on a free loopback port and serves until close.
func startEgress(allow *allowlist, log *slog.Logger, onBlocked func(u string)) (*egress, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("unable to start the browsers' egress proxy: %w", err)
	}
	g := &egress{allow: allow, onBlocked: onBlocked, log: log, ln: ln}
	g.proxy = &httputil.ReverseProxy{
		// The request is absolute-form (a proxy request): it goes where it
		// says, which ServeHTTP checked.
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL = r.In.URL; r.Out.Host = r.In.Host },
		Transport: &http.Transport{
			Proxy:               nil, // never an environment proxy
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	g.srv = &http.Server{Handler: g, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = g.srv.Serve(ln) }()
	return g, nil
}

// browserOptions point a browser at the proxy, loopback included
// (Chromium bypasses proxies for loopback unless told "<-loopback>").
func (g *egress) browserOptions() []env.BrowserOption {
	return []env.BrowserOption{
		env.WithBrowserFlag("proxy-server", "http://"+g.ln.Addr().String()),
		env.WithBrowserFlag("proxy-bypass-list", "<-loopback>"),
	}
}

// ServeHTTP forwards a request or a CONNECT tunnel to an allowed origin and
// refuses everything else with 403, without connecting anywhere.
func (g *egress) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		g.connect(w, r)
		return
	}
	if r.URL.Host == "" || !g.allow.allows(r.URL.String()) {
		g.block(w, r.URL.String())
		return
	}
	g.proxy.ServeHTTP(w, r)
}

// connect tunnels to host:port when http or https there is an allowed
// origin (Chromium tunnels https and WebSockets through CONNECT).
func (g *egress) connect(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if !g.allow.allows("http://"+host) && !g.allow.allows("https://"+host) {
		g.block(w, "connect://"+host)
		return
	}
	up, err := net.DialTimeout("tcp", host, 10*time.Second)
	if err != nil {
		http.Error(w, "unable to reach "+host, http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		http.Error(w, "tunnels unsupported", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	_, _ = down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	go func() {
		if n := buf.Reader.Buffered(); n > 0 {
			b, _ := buf.Reader.Peek(n)
			_, _ = up.Write(b)
		}
		_, _ = io.Copy(up, down)
		_ = up.Close()
	}()
	go func() {
		_, _ = io.Copy(down, up)
		_ = down.Close()
	}()
}

func (g *egress) block(w http.ResponseWriter, u string) {
	g.onBlocked(u)
	g.log.Debug("browser request refused by the egress proxy", "url", clip(u, 200))
	http.Error(w, "blocked by the actor's origin allowlist", http.StatusForbidden)
}

// close stops the proxy: no new request; open tunnels end with their
// browsers (the pool is closed first).
func (g *egress) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := g.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = g.srv.Close()
	}
	return err
}
