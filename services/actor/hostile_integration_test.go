package actor

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// rawListener counts connections and bytes arriving on a loopback port (a
// stand-in for the broker, ClickHouse or an admin port).
type rawListener struct {
	ln           net.Listener
	conns, bytes atomic.Int64
}

func newRawListener(t *testing.T) *rawListener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &rawListener{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.conns.Add(1)
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
					n, err := c.Read(buf)
					r.bytes.Add(int64(n))
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return r
}

func (r *rawListener) port() int { return r.ln.Addr().(*net.TCPAddr).Port }

// TestIntegrationHostilePage runs, from an allowed page in an executor's
// tab, every way a page has to send something elsewhere, each at a
// listener of its own on loopback, and requires that none of them
// received a byte.
func TestIntegrationHostilePage(t *testing.T) {
	testenv.Integration(t)
	srv := startWebenv(t, "none")
	var httpHits atomic.Int64
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpHits.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write([]byte("outside"))
	}))
	defer foreign.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// As Start wires them: the browsers' egress proxy, then the pool.
	x, reg := allowedTab(t, ctx, srv.URL(), true)
	if _, err := x.e.Reset(ctx, env.TaskRef{Family: "click-button", Site: "aurora", Seed: 3}); err != nil {
		t.Fatal(err)
	}
	attempts := []struct{ name, js string }{
		{"websocket", `new Promise(function (ok) { try { var w = new WebSocket('ws://127.0.0.1:%d/'); w.onopen = function () { w.send('hello'); ok('open'); }; w.onerror = function () { ok('error'); }; } catch (e) { ok('threw'); } setTimeout(function () { ok('timeout'); }, 3000); })`},
		{"fetch", `fetch('http://127.0.0.1:%d/x').then(function () { return 'loaded'; }, function () { return 'failed'; })`},
		{"beacon", `(navigator.sendBeacon('http://127.0.0.1:%d/b', 'data') ? 'queued' : 'refused')`},
		{"img", `new Promise(function (ok) { var i = new Image(); i.onload = function () { ok('loaded'); }; i.onerror = function () { ok('error'); }; i.src = 'http://127.0.0.1:%d/i.png'; })`},
		{"iframe", `new Promise(function (ok) { var f = document.createElement('iframe'); f.onload = function () { ok('load event'); }; f.src = 'http://127.0.0.1:%d/f'; document.body.appendChild(f); setTimeout(function () { ok('timeout'); }, 3000); })`},
		{"window.open", `(function () { var w = window.open('http://127.0.0.1:%d/w'); return w ? 'opened' : 'refused'; })()`},
		{"xhr", `new Promise(function (ok) { var r = new XMLHttpRequest(); r.onload = function () { ok('loaded'); }; r.onerror = function () { ok('error'); }; r.open('GET', 'http://127.0.0.1:%d/x'); r.send(); })`},
		{"eventsource", `new Promise(function (ok) { var e = new EventSource('http://127.0.0.1:%d/e'); e.onerror = function () { e.close(); ok('error'); }; e.onopen = function () { ok('open'); }; setTimeout(function () { ok('timeout'); }, 3000); })`},
		{"form post", `(function () { var f = document.createElement('form'); f.method = 'POST'; f.action = 'http://127.0.0.1:%d/p'; f.target = '_blank'; document.body.appendChild(f); f.submit(); return 'submitted'; })()`},
	}
	for _, a := range attempts {
		l := newRawListener(t)
		js := fmt.Sprintf(a.js, l.port())
		ectx, ecancel := context.WithTimeout(x.e.TabContext(), 20*time.Second)
		got, err := chromedp.Run(ectx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
		ecancel()
		time.Sleep(1500 * time.Millisecond) // let a late request land
		t.Logf("%-12s page says %-12q err %v; listener got %d connections, %d bytes", a.name, got, err, l.conns.Load(), l.bytes.Load())
		if l.conns.Load() != 0 {
			t.Errorf("%s reached a loopback port: %d connections, %d bytes", a.name, l.conns.Load(), l.bytes.Load())
		}
	}
	// file:// from the page.
	fctx, fcancel := context.WithTimeout(x.e.TabContext(), 20*time.Second)
	got, err := chromedp.Run(fctx, chromedp.Evaluate[string](`fetch('file:///etc/passwd').then(function (r) { return r.text(); }).then(function (t) { return 'read ' + t.length; }, function () { return 'failed'; })`, chromedp.EvalAwaitPromise))
	fcancel()
	if err != nil || got != "failed" {
		t.Errorf("file:///etc/passwd from the page: %q, %v", got, err)
	}
	// Every attempt was counted: by the tab's allowlist or by the proxy.
	if got := counterValue(t, reg, "asyncwebrl_actor_blocked_requests_total"); got < float64(len(attempts)) {
		t.Errorf("%v blocked requests counted for %d attempts", got, len(attempts))
	}
	if httpHits.Load() != 0 {
		t.Errorf("the foreign server got %d requests", httpHits.Load())
	}
	// The allowed origin still works through the proxy.
	if _, err := x.e.Reset(ctx, env.TaskRef{Family: "click-button", Site: "aurora", Seed: 4}); err != nil {
		t.Fatalf("an allowed page through the proxy: %v", err)
	}
}
