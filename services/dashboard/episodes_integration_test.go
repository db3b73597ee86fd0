package dashboard_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/services/dashboard"
)

// TestIntegrationDashboardEpisodeView records the known episodes (frames
// kept as the recorder keeps them by default: every greedy episode's, one
// training episode in 20) into a database of its own, checks the episode
// endpoints, then steps through the greedy episode in real Chromium and
// reads the canvas back: each step's frame colour is drawn, and the acted
// element's box is outlined in the outline colour (and nothing is outlined
// at the terminal step).
func TestIntegrationDashboardEpisodeView(t *testing.T) {
	db, conn := analyticstest.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, run := range []string{"p.", "q."} {
		if _, err := analyticstest.Load(ctx, conn, db, analyticstest.EpisodeDataset(run), analytics.WithFrames(20)); err != nil {
			t.Fatal(err)
		}
	}
	trainSampled := analytics.FrameSampled("p.train-1", 20)
	d := dashboard.New("127.0.0.1:0", analyticstest.Config(t, db))
	if err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer d.Stop(context.Background())
	base := "http://" + d.Addr()
	window := fmt.Sprintf("since=%s&until=%s", analyticstest.T0.Add(-5*time.Minute).Format(time.RFC3339),
		analyticstest.T0.Add(10*time.Minute).Format(time.RFC3339))

	get := func(path string, want int) []byte {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d\n%s", path, resp.StatusCode, want, b)
		}
		return b
	}
	list := func(filter string) []string {
		t.Helper()
		var out struct {
			Episodes []struct {
				ID        string `json:"episode_id"`
				HasFrames uint8  `json:"has_frames"`
			} `json:"episodes"`
		}
		if err := json.Unmarshal(get("/api/episodes?"+window+filter, 200), &out); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range out.Episodes {
			ids = append(ids, fmt.Sprintf("%s:%d", e.ID, e.HasFrames))
		}
		return ids
	}
	withFrames := []string{"p.eval-1:1"}
	train := fmt.Sprintf("p.train-1:%d", map[bool]int{true: 1}[trainSampled])
	if trainSampled {
		withFrames = append(withFrames, train)
	}
	for filter, want := range map[string][]string{
		"&run=p.":                       {"p.eval-1:1", train},
		"&run=p.&kind=greedy":           {"p.eval-1:1"},
		"&run=p.&split=train&success=0": {train},
		"&run=p.&family=type":           {train},
		"&run=p.&family=click/seed-9":   {"p.eval-1:1"},
		"&run=p.&kind=demo":             nil,
		"&run=p.&frames=1":              withFrames,
		"&kind=greedy":                  {"p.eval-1:1", "q.eval-1:1"},
	} {
		got := list(filter)
		if strings.Join(sorted(got), " ") != strings.Join(sorted(want), " ") {
			t.Errorf("episodes%s: %v, want %v", filter, got, want)
		}
	}

	// The greedy episode's steps: the action of each observation, the box
	// of the element it names, the step's reward.
	var ep struct {
		Steps []struct {
			Step        uint32    `json:"step"`
			Frame       string    `json:"frame"`
			FrameStored bool      `json:"frame_stored"`
			Action      string    `json:"action"`
			Box         []float32 `json:"box"`
			Reward      *float64  `json:"reward"`
			Success     bool      `json:"success"`
			Stability   float64   `json:"stability_score"`
			Terminal    bool      `json:"terminal"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(get("/api/episode?id=p.eval-1", 200), &ep); err != nil {
		t.Fatal(err)
	}
	b1, b2 := analyticstest.Boxes["b1"], analyticstest.Boxes["b2"]
	if len(ep.Steps) != 3 {
		t.Fatalf("p.eval-1 has %d steps, want 3: %+v", len(ep.Steps), ep.Steps)
	}
	for i, want := range []struct {
		action string
		box    []float32
		reward float64
		score  float64
	}{{`click("b1")`, b1[:], 0, 0.5}, {`fill("b2", "hi")`, b2[:], 1, 0.75}, {"", nil, -1, 1}} {
		s := ep.Steps[i]
		reward := -1.0
		if s.Reward != nil {
			reward = *s.Reward
		}
		if s.Step != uint32(i) || s.Action != want.action || fmt.Sprint(s.Box) != fmt.Sprint(want.box) || reward != want.reward ||
			s.Stability != want.score || !s.FrameStored || s.Terminal != (i == 2) {
			t.Errorf("step %d: %+v (reward %v), want action %q box %v reward %v stability %v, frame stored", i, s, reward, want.action, want.box, want.reward, want.score)
		}
	}
	var tr struct {
		Steps []struct {
			FrameStored bool `json:"frame_stored"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(get("/api/episode?id=p.train-1", 200), &tr); err != nil {
		t.Fatal(err)
	}
	if len(tr.Steps) != 1 || tr.Steps[0].FrameStored != trainSampled {
		t.Errorf("p.train-1: %+v, want one step whose frame is stored iff the episode is sampled (%v)", tr.Steps, trainSampled)
	}
	get("/api/episode?id=p.nope", 404)

	// The frame endpoint serves the stored bytes by hash.
	frame := analyticstest.Frame(analyticstest.FrameColors[0])
	sum := sha256.Sum256(frame)
	if got := get("/api/frames/"+hex.EncodeToString(sum[:]), 200); !bytes.Equal(got, frame) || ep.Steps[0].Frame != hex.EncodeToString(sum[:]) {
		t.Errorf("frame of step 0: %d bytes (hash %s), want the %d bytes of hash %x", len(got), ep.Steps[0].Frame, len(frame), sum)
	}
	get("/api/frames/not-a-hash", 400)
	get("/api/frames/"+strings.Repeat("0", 64), 404)

	// The page, in Chromium.
	bctx := browser(ctx, t)
	if err := chromedp.Do(bctx,
		chromedp.Navigate(base+"/episodes?"+window+"&run=p.&kind=greedy"),
		chromedp.WaitVisible(chromedp.CSS(`tr.episode[data-episode="p.eval-1"]`)),
	); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	rows, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("tr.episode").length`))
	if err != nil || rows != 1 {
		t.Fatalf("the greedy filter lists %d episodes (%v), want 1", rows, err)
	}
	waitDrawn := func(want string) {
		t.Helper()
		if _, err := chromedp.Run(bctx, chromedp.Poll[string](fmt.Sprintf(`document.body.dataset.drawn === %q && "1"`, want),
			chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			got, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.body.dataset.drawn + " " + document.getElementById("status").textContent`))
			t.Fatalf("step %s never drawn (drawn: %s): %v", want, got, err)
		}
	}
	type px [3]int
	// pixels reads the canvas at frame coordinates (scaled by the page).
	pixels := func(pts [][2]float32) []px {
		t.Helper()
		js, _ := json.Marshal(pts)
		out, err := chromedp.Run(bctx, chromedp.Evaluate[[]px](fmt.Sprintf(`(() => {
			const c = document.getElementById("frame"), s = Number(c.dataset.scale), x = c.getContext("2d");
			return %s.map(([a, b]) => Array.from(x.getImageData(Math.round(a * s), Math.round(b * s), 1, 1).data.slice(0, 3)));
		})()`, js)))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	text := func(id string) string {
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("`+id+`").textContent`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	outline := px{255, 0, 255}
	near := func(p px, c color.RGBA) bool {
		d := func(a int, b uint8) int { return max(a-int(b), int(b)-a) }
		return d(p[0], c.R) <= 12 && d(p[1], c.G) <= 12 && d(p[2], c.B) <= 12
	}
	// The left edge's middle, the centre and a corner of a box.
	edge := func(b [4]float32) [2]float32 { return [2]float32{b[0], b[1] + b[3]/2} }
	centre := func(b [4]float32) [2]float32 { return [2]float32{b[0] + b[2]/2, b[1] + b[3]/2} }
	corner := [2]float32{2, 2}
	check := func(step int, acted, other [4]float32, outlined bool, action, reward, stability string) {
		t.Helper()
		waitDrawn(fmt.Sprintf("p.eval-1:%d", step))
		bg := analyticstest.FrameColors[step]
		p := pixels([][2]float32{edge(acted), centre(acted), corner, edge(other)})
		if outlined && p[0] != outline {
			t.Errorf("step %d: the acted element's edge is %v, want the outline %v", step, p[0], outline)
		}
		if !outlined && !near(p[0], bg) {
			t.Errorf("step %d (terminal): %v drawn where no outline belongs, want the frame's %v", step, p[0], bg)
		}
		for i, q := range p[1:] {
			if !near(q, bg) {
				t.Errorf("step %d: pixel %d is %v, want the frame's colour %v", step, i+1, q, bg)
			}
		}
		if got := text("action"); got != action {
			t.Errorf("step %d: action %q, want %q", step, got, action)
		}
		if got := text("reward"); !strings.HasPrefix(got, reward) {
			t.Errorf("step %d: reward %q, want %q…", step, got, reward)
		}
		if got := text("stability"); !strings.HasPrefix(got, stability) {
			t.Errorf("step %d: stability %q, want %q…", step, got, stability)
		}
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`tr.episode[data-episode="p.eval-1"]`))); err != nil {
		t.Fatal(err)
	}
	check(0, b1, b2, true, `click("b1")`, "0", "0.50")
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#next"))); err != nil {
		t.Fatal(err)
	}
	check(1, b2, b1, true, `fill("b2", "hi")`, "1 · done, success", "0.75")
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#next"))); err != nil {
		t.Fatal(err)
	}
	check(2, b2, b1, false, "— (terminal)", "—", "1.00")
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#prev"))); err != nil {
		t.Fatal(err)
	}
	check(1, b2, b1, true, `fill("b2", "hi")`, "1", "0.75")
	for _, dir := range []string{t.TempDir(), runDir(t)} {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, "dashboard-episode-test.png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
