package actor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// chromePage is an env.Page over a plain chromedp tab.
type chromePage struct{ ctx context.Context }

func (p chromePage) Eval(ctx context.Context, js string, out any) error {
	c, cancel := context.WithCancel(p.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	raw, err := chromedp.Run(c, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

func (p chromePage) Screenshot(ctx context.Context) ([]byte, error) {
	c, cancel := context.WithCancel(p.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	res, err := chromedp.Call(c, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
	if err != nil {
		return nil, err
	}
	return res.Data, nil
}

func (chromePage) Loading() bool { return false }

// countingPage counts the screenshots a settler takes.
type countingPage struct {
	env.Page
	shots int
}

func (p *countingPage) Screenshot(ctx context.Context) ([]byte, error) {
	p.shots++
	return p.Page.Screenshot(ctx)
}

// settlePage is a page with a minimal env helper (settleState from a
// MutationObserver) and body, after the actor's tab script.
func settlePage(body string) string {
	return `<!doctype html><html><head><style>body{margin:0;font:12px sans-serif}
.spin{width:22px;height:22px;border:3px solid #ccc;border-top-color:#555;border-radius:50%;animation:s .7s linear infinite}
@keyframes s{to{transform:rotate(360deg)}}</style>
<script>` + tabScript + `
(function(){var S=window.__wob={last:performance.now()};
new MutationObserver(function(){S.last=performance.now();}).observe(document,{subtree:true,childList:true,attributes:true,characterData:true});
S.settleState=function(){return {ready:document.readyState,inflight:0,leaving:false,since:performance.now()-S.last};};})();
</script></head><body>` + body + `</body></html>`
}

// TestIntegrationVisualSettlerInChromium runs the detector against real
// rendering: a static page settles (with a focused text field, whose caret
// is hidden), a CSS spinner never does although the DOM is quiet, a DOM
// that keeps changing never does, a spinner that stops settles, and a
// canvas animation, which only the frames show, never does.
func TestIntegrationVisualSettlerInChromium(t *testing.T) {
	testenv.Integration(t)
	pages := map[string]string{
		"static":   settlePage(`<p>Hello</p><input id=f autofocus value="typed"><script>document.getElementById('f').focus()</script>`),
		"spinner":  settlePage(`<div class=spin></div>`),
		"mutating": settlePage(`<p id=n>0</p><script>var i=0;setInterval(function(){document.getElementById('n').textContent=++i},30)</script>`),
		"stops":    settlePage(`<div id=s class=spin></div><script>setTimeout(function(){document.getElementById('s').className=''},700)</script>`),
		// Drawing on a canvas mutates no DOM and runs no CSS animation:
		// only the frames show it. It draws the frame number, so no two
		// frames are alike: a square moving x%50 repeated every 50
		// frames, and two screenshots a multiple of 50 frames apart
		// were identical (twice in clean-clone CI, with unpaced frames).
		"canvas": settlePage(`<canvas id=c width=60 height=30></canvas><script>var x=0,g=document.getElementById('c').getContext('2d');
(function f(){g.fillStyle='#fff';g.fillRect(0,0,60,30);g.fillStyle='#000';g.font='12px sans-serif';g.fillText(String(x++),4,20);requestAnimationFrame(f)})()</script>`),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, pages[r.URL.Path[1:]])
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Paced like the actor's browsers.
	p, err := newPool(ctx, 1, pacedFrames(), slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	b, _, err := p.get(0)
	if err != nil {
		t.Fatal(err)
	}
	tab, closeTab := chromedp.NewContext(b.Context())
	defer closeTab()
	v := Visual{Timeout: 2 * time.Second}
	for _, c := range []struct {
		name   string
		stable bool
	}{{"static", true}, {"spinner", false}, {"mutating", false}, {"stops", true}, {"canvas", false}} {
		if _, err := chromedp.Run(tab, chromedp.Navigate(srv.URL+"/"+c.name)); err != nil {
			t.Fatal(err)
		}
		cp := &countingPage{Page: chromePage{tab}}
		s, err := v.Settle(ctx, cp)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s.Stable != c.stable {
			t.Fatalf("%s: stable %v (score %.3f after %s), want %v", c.name, s.Stable, s.Score, s.Waited, c.stable)
		}
		if c.stable && (len(s.Frame) == 0 || s.Score != 1) {
			t.Fatalf("%s: stable with score %v and a %d-byte frame", c.name, s.Score, len(s.Frame))
		}
		// Only the canvas hides its picture from the DOM: the other
		// pages settle on one frame, the canvas is compared in pairs.
		if c.name == "canvas" && (s.Score <= 0 || s.Score >= 1 || cp.shots < 2) {
			t.Fatalf("canvas: score %v after %d screenshots, want frames compared and found different", s.Score, cp.shots)
		}
		if c.stable && cp.shots != 1 {
			t.Fatalf("%s: %d screenshots, want the one a page the DOM describes needs", c.name, cp.shots)
		}
		t.Log(fmt.Sprintf("%s: stable %v score %.3f waited %s", c.name, s.Stable, s.Score, s.Waited))
	}
}
