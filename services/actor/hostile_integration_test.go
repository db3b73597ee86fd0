package actor

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
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
	// An allowed origin of its own that answers with a redirect to a
	// loopback port, and serves a page whose service worker fetches one:
	// the two ways out that start on an allowed origin.
	side := httptest.NewServer(hostileSide())
	defer side.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// As Start wires them: the browsers' egress proxy, then the pool.
	x, reg := allowedTab(t, ctx, srv.URL(), true, side.URL)
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
		{"redirect", `new Promise(function (ok) { var f = document.createElement('iframe'); f.onload = function () { ok('load event'); }; f.src = '` + side.URL + `/r?to=%d'; document.body.appendChild(f); setTimeout(function () { ok('timeout'); }, 3000); })`},
		{"fetch redirect", `fetch('` + side.URL + `/r?to=%d').then(function () { return 'loaded'; }, function () { return 'failed'; })`},
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
	// A service worker of an allowed page fetches a loopback port when it
	// installs (its requests are the browser's, outside any tab).
	sw := newRawListener(t)
	sctx, scancel := context.WithTimeout(x.e.TabContext(), 30*time.Second)
	var swSaid string
	_, err := chromedp.Run(sctx, chromedp.Navigate(fmt.Sprintf("%s/sw.html?to=%d", side.URL, sw.port())))
	// The page's title says when the worker has tried (asked again: the
	// worker installs in its own time).
	for err == nil && !strings.HasPrefix(swSaid, "sw ") {
		swSaid, err = chromedp.Run(sctx, chromedp.Evaluate[string](`document.title`))
		if !strings.HasPrefix(swSaid, "sw ") {
			time.Sleep(200 * time.Millisecond)
		}
	}
	scancel()
	time.Sleep(1500 * time.Millisecond)
	t.Logf("%-12s page says %-12q err %v; listener got %d connections, %d bytes", "serviceworker", swSaid, err, sw.conns.Load(), sw.bytes.Load())
	if sw.conns.Load() != 0 {
		t.Errorf("a service worker reached a loopback port: %d connections, %d bytes", sw.conns.Load(), sw.bytes.Load())
	}
	if swSaid != "sw fetch failed" {
		// The worker must have run and tried: otherwise nothing was tested.
		t.Errorf("the service worker's attempt: %q, %v; want %q", swSaid, err, "sw fetch failed")
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

// hostileSide is the hostile test's allowed second origin: /r redirects to
// the loopback port ?to=, /sw.html registers /sw.js, whose install fetches
// that port and tells the page how it went (the page's title then reads
// "sw fetch failed" or "sw fetch loaded").
func hostileSide() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/r", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+r.URL.Query().Get("to")+"/r", http.StatusFound)
	})
	mux.HandleFunc("/sw.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>waiting</title><script>
navigator.serviceWorker.addEventListener('message', function (e) { document.title = 'sw ' + e.data; });
navigator.serviceWorker.register('/sw.js?to=%s').then(function () { return navigator.serviceWorker.ready; })
  .then(function (reg) { reg.active.postMessage('go'); }, function (e) { document.title = 'sw not registered: ' + e; });
</script>`, r.URL.Query().Get("to"))
	})
	mux.HandleFunc("/sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprintf(w, `self.addEventListener('message', function (e) {
  fetch('http://127.0.0.1:%s/sw').then(function () { return 'fetch loaded'; }, function () { return 'fetch failed'; })
    .then(function (s) { e.source.postMessage(s); });
});`, r.URL.Query().Get("to"))
	})
	return mux
}
