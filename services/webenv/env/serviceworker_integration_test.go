package env

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
)

// TestIntegrationServiceWorkerBypassed: a page installs a service worker
// that answers every request of its origin with "forged", and claims the
// tab. The tab's later requests still reach the server (the service
// worker would otherwise outlive the episode and answer the next one's
// pages); with the bypass turned off, the same worker forges them, so the
// test sees the worker at work.
func TestIntegrationServiceWorkerBypassed(t *testing.T) {
	testenv.Integration(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write([]byte(`self.addEventListener('install', e => self.skipWaiting());
self.addEventListener('activate', e => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', e => e.respondWith(new Response('forged')));`))
	})
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("real")) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<!doctype html><title>sw</title><p>page</p>`))
	})
	e := envOn(t, mux)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, ccancel := e.bind(ctx)
	defer ccancel()
	if err := e.open(c, e.base.String()+"/"); err != nil {
		t.Fatal(err)
	}
	var state string
	install := `navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready).then(() => new Promise(ok => {
  if (navigator.serviceWorker.controller) return ok('controlled');
  navigator.serviceWorker.addEventListener('controllerchange', () => ok('controlled'));
  setTimeout(() => ok('not controlled'), 10000);
})).catch(err => 'refused: ' + err)`
	if err := e.eval(c, install, &state); err != nil {
		t.Fatal(err)
	}
	t.Logf("service worker: %s", state)
	fetchData := func() string {
		t.Helper()
		var body string
		if err := e.eval(c, `fetch('/data?'+Math.random()).then(r => r.text(), err => 'failed: ' + err)`, &body); err != nil {
			t.Fatal(err)
		}
		return body
	}
	if got := fetchData(); got != "real" {
		t.Errorf("with the bypass the page's fetch got %q, want the server's \"real\"", got)
	}
	// The control: the same tab without the bypass.
	if state != "controlled" {
		t.Fatalf("the worker never controlled the page (%s): the control below would prove nothing", state)
	}
	if _, err := chromedp.Call(c, network.SetBypassServiceWorker, network.SetBypassServiceWorkerParams{Bypass: false}); err != nil {
		t.Fatal(err)
	}
	if got := fetchData(); got != "forged" {
		t.Errorf("without the bypass the fetch got %q, want the worker's \"forged\" (the test no longer sees a worker at work)", got)
	}
	// The bypass back on: the next episode's page, a navigation, comes from
	// the server too.
	if _, err := chromedp.Call(c, network.SetBypassServiceWorker, network.SetBypassServiceWorkerParams{Bypass: true}); err != nil {
		t.Fatal(err)
	}
	if err := e.open(c, e.base.String()+"/data"); err != nil {
		t.Fatal(err)
	}
	var text string
	if err := e.eval(c, `document.body.innerText`, &text); err != nil {
		t.Fatal(err)
	}
	if text != "real" {
		t.Errorf("with the bypass the next page is %q, want the server's \"real\"", text)
	}
}
