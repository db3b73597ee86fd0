package webenv

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newTestServer(t *testing.T, opts ...Option) *httptest.Server {
	t.Helper()
	s, err := New(append([]Option{WithLogger(quietLog())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func do(t *testing.T, method, u, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, resp.Header
}

func TestBadInputGets404JSON(t *testing.T) {
	ts := newTestServer(t) // the default split: train
	test := catalog.TestSite("click-button")
	train := catalog.SitesOf("click-button", catalog.SplitTrain)[0]
	cases := []struct {
		name, method, path, body, reason string
	}{
		{"unknown family page", "GET", "/t/no-such/aurora/", "", "unknown task family"},
		{"unknown site page", "GET", "/t/click-button/mars/", "", "unknown site"},
		{"test site on a train server", "GET", "/t/click-button/" + test + "/", "", "test split"},
		{"unknown family episode", "POST", "/api/episodes", `{"family":"nope","site":"aurora","seed":1}`, "unknown task family"},
		{"unknown site episode", "POST", "/api/episodes", `{"family":"click-button","site":"mars","seed":1}`, "unknown site"},
		{"test site episode", "POST", "/api/episodes", `{"family":"click-button","site":"` + test + `","seed":1}`, "test split"},
		{"negative seed", "POST", "/api/episodes", `{"family":"click-button","site":"` + train + `","seed":-1}`, "unknown seed"},
		{"non-numeric seed", "POST", "/api/episodes", `{"family":"click-button","site":"` + train + `","seed":"abc"}`, "unknown seed"},
		{"missing seed", "POST", "/api/episodes", `{"family":"click-button","site":"` + train + `"}`, "unknown seed"},
		{"unknown seed task info", "GET", "/api/tasks/click-button/" + train + "/x1", "", "unknown seed"},
		{"unknown episode events", "POST", "/api/e/deadbeef/events", `{"events":[]}`, "unknown episode"},
		{"unknown episode page", "GET", "/e/deadbeef/", "", "unknown episode"},
		{"unknown path", "GET", "/wp-admin", "", "no such page"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, m, h := do(t, c.method, ts.URL+c.path, c.body)
			if code != http.StatusNotFound {
				t.Fatalf("status %d, want 404", code)
			}
			if h.Get("Content-Type") != "application/json" {
				t.Errorf("content type %q", h.Get("Content-Type"))
			}
			if r, _ := m["error"].(string); !strings.Contains(r, c.reason) {
				t.Errorf("error %q, want it to mention %q", r, c.reason)
			}
		})
	}
	// Garbage is a 400, not a crash.
	if code, m, _ := do(t, "POST", ts.URL+"/api/episodes", `{"family":`); code != http.StatusBadRequest || m["error"] == nil {
		t.Errorf("bad JSON: %d %v", code, m)
	}
}

func TestRecoverMiddlewareAnswers500JSON(t *testing.T) {
	h := recoverMiddleware(quietLog(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"error"`) {
		t.Fatalf("got %d %q", rec.Code, rec.Body.String())
	}
}

func TestEpisodeOverHTTP(t *testing.T) {
	ts := newTestServer(t, WithSplit(catalog.SplitAll))
	p, _ := Generate("copy-text", "dune", 11)
	code, m, _ := do(t, "POST", ts.URL+"/api/episodes", `{"family":"copy-text","site":"dune","seed":"11"}`)
	if code != 200 || m["instruction"] != p.Instruction || !strings.Contains(m["html"].(string), "Code:") {
		t.Fatalf("create: %d %v", code, m)
	}
	id := m["id"].(string)
	body := `{"events":[{"t":"set","k":"code","v":"` + p.Plan[0].Text + `"},{"t":"click","k":"submit"}]}`
	code, m, _ = do(t, "POST", ts.URL+"/api/e/"+id+"/events", body)
	if code != 200 || m["done"] != true || m["success"] != true || m["partial"] != 1.0 {
		t.Fatalf("events: %d %v", code, m)
	}
	if code, m, _ = do(t, "GET", ts.URL+"/api/e/"+id, ""); code != 200 || m["success"] != true {
		t.Fatalf("score: %d %v", code, m)
	}
}

// TestMultiPageSiteOverHTTP walks the account-update site with plain HTTP:
// pages, form posts, redirects and the server-side facts.
func TestMultiPageSiteOverHTTP(t *testing.T) {
	ts := newTestServer(t, WithSplit(catalog.SplitAll))
	p, _ := Generate("account-update", "basalt", 2)
	_, m, _ := do(t, "POST", ts.URL+"/api/episodes", `{"family":"account-update","site":"basalt","seed":2}`)
	id := m["id"].(string)
	base := ts.URL + "/e/" + id
	post := func(path string, form url.Values) *http.Response {
		resp, err := noRedirect.PostForm(base+path, form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// Wrong password: the sign-in page again, no redirect.
	if r := post("/signin", url.Values{"user": {p.Plan[0].Text}, "pass": {"nope"}}); r.StatusCode != 200 {
		t.Fatalf("bad sign-in: %d", r.StatusCode)
	}
	if r := post("/signin", url.Values{"user": {p.Plan[0].Text}, "pass": {p.Plan[1].Text}}); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/e/"+id+"/home" {
		t.Fatalf("sign-in: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	post("/profile", url.Values{"display": {""}, "email": {p.Plan[4].Text}, "phone": {p.Plan[5].Text}, "tz": {p.Plan[6].Text}})
	_, m, _ = do(t, "GET", ts.URL+"/api/e/"+id, "")
	if m["done"] == true || m["partial"].(float64) < 0.8 {
		t.Fatalf("after save: %v", m)
	}
	resp, err := noRedirect.Get(base + "/signout")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, m, _ = do(t, "GET", ts.URL+"/api/e/"+id, "")
	if m["done"] != true || m["success"] != true {
		t.Fatalf("after sign-out: %v", m)
	}
	_, m, _ = do(t, "POST", ts.URL+"/api/episodes", `{"family":"navigate-pages","site":"basalt","seed":2}`)
	if code, m, _ := do(t, "GET", ts.URL+"/e/"+m["id"].(string)+"/no/such/page", ""); code != 404 || m["error"] == nil {
		t.Errorf("unknown page: %d %v", code, m)
	}
}

func TestStartPageSpeaksTheProtocol(t *testing.T) {
	ts := newTestServer(t, WithSplit(catalog.SplitAll), WithProfile(Profile{Name: "async", Server: NoDelay{}, Client: webClient}))
	resp, err := http.Get(ts.URL + "/t/tabs/cedar/")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(raw)
	for _, want := range []string{`id="query"`, `id="area"`, `/static/core.js`, `function genProblem()`, `"mode":"start"`, `"async":{"enabled":true`, `content="240x320"`} {
		if !strings.Contains(page, want) {
			t.Errorf("start page lacks %s", want)
		}
	}
	resp, err = http.Get(ts.URL + "/static/core.js")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"WOB_REWARD_GLOBAL", "WOB_RAW_REWARD_GLOBAL", "WOB_DONE_GLOBAL", "WOB_REWARD_REASON", "WOB_EPISODE_ID", "WOB_TASK_READY", "startEpisodeReal", "endEpisode", "getUtterance", "getDOMInfo", "elementClick", "Math.seedrandom"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("core.js lacks %s", want)
		}
	}
}

func TestServerStartStop(t *testing.T) {
	s, err := New(WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || s.Name() != "webenv" {
		t.Fatalf("url %q name %q", s.URL(), s.Name())
	}
	resp, err := http.Get(s.URL() + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(s.URL() + "/healthz"); err == nil {
		t.Error("server still answers after Stop")
	}
}

func TestThirdPartyMount(t *testing.T) {
	ts := newTestServer(t, WithThirdPartyDir("testdata/thirdparty"))
	code, _, _ := do(t, "GET", ts.URL+"/thirdparty/sample-click.html", "")
	if code != 200 {
		t.Fatalf("sample page: %d", code)
	}
	code, m, _ := do(t, "GET", ts.URL+"/thirdparty/missing.html", "")
	if code != 404 || m["error"] == nil {
		t.Fatalf("missing page: %d %v", code, m)
	}
	s, _ := New(WithThirdPartyDir("testdata/thirdparty"), WithLogger(quietLog()))
	found := false
	for _, f := range s.Families() {
		found = found || (f.Name == "thirdparty/sample-click" && f.ThirdParty)
	}
	if !found {
		t.Error("the sample page is not listed as a family")
	}
	if _, err := New(WithThirdPartyDir("testdata/no-such-dir")); err == nil {
		t.Error("a missing third-party dir was accepted")
	}
}
