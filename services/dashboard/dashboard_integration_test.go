package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/services/dashboard"
)

// chromium is Debian's browser binary (never /usr/bin/chromium, a wrapper).
const chromium = "/usr/lib/chromium/chromium"

// TestIntegrationDashboardRendersCharts serves the dashboard on the known
// dataset and loads it in real headless Chromium: every chart must draw
// lines with points, the JSON endpoint must answer the same data, and a
// screenshot is saved (.run/dashboard-test.png, and the test's temp dir).
func TestIntegrationDashboardRendersCharts(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("chromium not installed at %s (infra/setup.sh installs it): %v", chromium, err)
	}
	db, conn := analyticstest.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := analyticstest.Load(ctx, conn, db, analyticstest.Dataset("p.")); err != nil {
		t.Fatal(err)
	}
	if err := analytics.InsertLag(ctx, conn, db, analyticstest.Lag("p.")); err != nil {
		t.Fatal(err)
	}
	// Another run in the same database: the page shows run p. only.
	if _, err := analyticstest.Load(ctx, conn, db, analyticstest.Dataset("q.")); err != nil {
		t.Fatal(err)
	}
	d := dashboard.New("127.0.0.1:0", analyticstest.Config(t, db), dashboard.WithRefresh(time.Second))
	if err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer d.Stop(context.Background())
	window := fmt.Sprintf("since=%s&until=%s&run=p.", analyticstest.T0.Add(-5*time.Minute).Format(time.RFC3339),
		analyticstest.T0.Add(10*time.Minute).Format(time.RFC3339))
	base := "http://" + d.Addr()

	// The endpoint itself: one chart per saved query, with rows.
	type apiResponse struct {
		Charts []struct {
			ID      string   `json:"id"`
			Columns []string `json:"columns"`
			Rows    [][]any  `json:"rows"`
			Error   string   `json:"error"`
		} `json:"charts"`
		BucketS int    `json:"bucket_s"`
		Run     string `json:"run"`
	}
	get := func(query string) apiResponse {
		t.Helper()
		resp, err := http.Get(base + "/api/charts?" + query)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var api apiResponse
		if err := json.Unmarshal(body, &api); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /api/charts: %d %v\n%s", resp.StatusCode, err, body)
		}
		return api
	}
	// events summed over the throughput chart's rows.
	events := func(api apiResponse) float64 {
		sum := 0.0
		for _, c := range api.Charts {
			if c.ID == "throughput" {
				for _, row := range c.Rows {
					sum += row[slices.Index(c.Columns, "events")].(float64)
				}
			}
		}
		return sum
	}
	api := get(window)
	wantRows := map[string]int{"learning": 3, "throughput": 17, "utilization": 10, "lag": 2}
	for _, c := range api.Charts {
		if c.Error != "" || len(c.Rows) != wantRows[c.ID] {
			t.Errorf("chart %s: %d rows (want %d), error %q", c.ID, len(c.Rows), wantRows[c.ID], c.Error)
		}
	}
	if api.BucketS != 60 || api.Run != "p." {
		t.Errorf("a 15-minute window of run p. has %ds buckets and run %q, want 60 and p.", api.BucketS, api.Run)
	}
	// The dataset's 47 events of run p. (analytics/README.md's throughput);
	// without ?run, run q.'s copy too.
	if got, all := events(api), events(get(strings.TrimSuffix(window, "&run=p."))); got != 47 || all != 94 {
		t.Errorf("throughput events: %v of run p. and %v of all runs, want 47 and 94", got, all)
	}

	// The page, in Chromium.
	bctx := browser(ctx, t)

	// CSS selectors only (chromedp.CSS is querySelector; a plain string
	// would be a DOM text search).
	err := chromedp.Do(bctx,
		chromedp.Navigate(base+"/?"+window),
		chromedp.WaitVisible(chromedp.CSS("main#charts section.chart")),
	)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	loaded, err := chromedp.Run(bctx, chromedp.Poll[string](`document.body.dataset.loaded === "1" && "1"`, chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil {
		t.Fatalf("page never loaded its data: %v", err)
	}
	perChart, err := chromedp.Run(bctx, chromedp.Evaluate[map[string]int](`Object.fromEntries([...document.querySelectorAll("section.chart")].map(s =>
		[s.id, s.querySelectorAll("svg path.series").length * 1000 + s.querySelectorAll("svg circle.point").length]))`))
	if err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if loaded != "1" {
		t.Fatalf("page never loaded its data (data-loaded=%q)", loaded)
	}
	// paths*1000 + points: learning has 2 series (easy sample, hard
	// greedy) and 3 points; throughput 9 topics and 17 points; utilization
	// 5 phases, 10 points; lag 1 group, 2 points.
	want := map[string]int{"chart-learning": 2003, "chart-throughput": 9017, "chart-utilization": 5010, "chart-lag": 1002}
	for id, n := range want {
		if perChart[id] != n {
			t.Errorf("%s: %d paths and %d points drawn, want %d and %d", id, perChart[id]/1000, perChart[id]%1000, n/1000, n%1000)
		}
	}
	for _, dir := range []string{t.TempDir(), runDir(t)} {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, "dashboard-test.png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
}

// browser starts headless Chromium for t, closed when t ends.
func browser(ctx context.Context, t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("chromium not installed at %s (infra/setup.sh installs it): %v", chromium, err)
	}
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 1000),
	)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(func() { bcancel(); acancel() })
	return bctx
}

// runDir is the repository's .run directory (git-ignored), when found.
func runDir(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, ".run")
			if os.MkdirAll(p, 0o755) != nil {
				return ""
			}
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
