package actor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// TestIntegrationAllowlist opens an executor's tab (real Chromium) with the
// default allowlist (the webenv origin) and checks that webenv pages load,
// while a navigation and a fetch to another origin (a live local server)
// never reach it and are counted.
func TestIntegrationAllowlist(t *testing.T) {
	testenv.Integration(t)
	srv := startWebenv(t, "none")
	var hits atomic.Int64
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write([]byte("<html><body>outside</body></html>"))
	}))
	defer foreign.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	x, reg := allowedTab(t, ctx, srv.URL(), false)

	obs, err := x.e.Reset(ctx, env.TaskRef{Family: "click-button", Site: "aurora", Seed: 3})
	if err != nil {
		t.Fatalf("an allowed page did not load: %v", err)
	}
	if !strings.HasPrefix(obs.URL, srv.URL()) || len(obs.Elements) == 0 {
		t.Fatalf("reset gave %s with %d elements", obs.URL, len(obs.Elements))
	}
	if n := x.blocked.Load(); n != 0 {
		t.Fatalf("%d requests of webenv pages were blocked", n)
	}

	res, err := x.e.Step(ctx, env.Action{Type: env.Goto, URL: foreign.URL + "/page"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(res.Obs.URL, foreign.URL) || !strings.Contains(res.Info.Error, "ERR_BLOCKED_BY_CLIENT") {
		t.Fatalf("goto another origin: page %s, error %q; want it blocked by the client", res.Obs.URL, res.Info.Error)
	}
	afterNav := x.blocked.Load()
	if afterNav < 1 {
		t.Fatalf("the navigation to %s was not counted as blocked (info %+v)", foreign.URL, res.Info)
	}

	// A sub-resource request from an allowed page.
	if _, err := x.e.Reset(ctx, env.TaskRef{Family: "click-button", Site: "aurora", Seed: 4}); err != nil {
		t.Fatal(err)
	}
	fctx, fcancel := context.WithTimeout(x.e.TabContext(), 30*time.Second)
	defer fcancel()
	got, err := chromedp.Run(fctx, chromedp.Evaluate[string](`fetch(`+strconv.Quote(foreign.URL+"/data")+
		`).then(function () { return 'loaded'; }, function () { return 'blocked'; })`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if got != "blocked" || x.blocked.Load() <= afterNav {
		t.Fatalf("fetch to another origin: %q, blocked count %d -> %d", got, afterNav, x.blocked.Load())
	}
	if hits.Load() != 0 {
		t.Fatalf("the foreign server got %d requests", hits.Load())
	}
	if c := counterValue(t, reg, "asyncwebrl_actor_blocked_requests_total"); c != float64(x.blocked.Load()) {
		t.Fatalf("metric %v, executor count %d", c, x.blocked.Load())
	}
}

// allowedTab opens executor 0's tab (real Chromium) on a pool of one
// browser, with the allowlist of the webenv origin at webenvURL installed,
// as Start wires them; withEgress starts the browsers' egress proxy first.
// reg holds the actor's metrics. Everything is closed at the test's end.
func allowedTab(t *testing.T, ctx context.Context, webenvURL string, withEgress bool, alsoAllowed ...string) (*executor, *prometheus.Registry) {
	t.Helper()
	log := testLogger(t)
	allow, err := newAllowlist(append([]string{webenvURL}, alsoAllowed...))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{opts: defaultOptions(), log: log, m: m, settler: Visual{}, webenvURL: webenvURL, allow: allow}
	var bopts []env.BrowserOption
	if withEgress {
		g, err := startEgress(allow, log, func(string) { s.c.blocked.Add(1); s.m.blocked.Inc() })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = g.close() })
		bopts = g.browserOptions()
	}
	if s.pool, err = newPool(ctx, 1, bopts, log, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.pool.close)
	x := newExecutor(s, 0)
	if err := x.open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.close)
	return x, reg
}

// counterValue reads a counter without labels from reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}
