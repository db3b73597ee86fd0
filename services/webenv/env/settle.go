package env

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
)

// Page is what a Settler may look at: the tab, through JavaScript and
// screenshots, and whether a navigation is in progress.
type Page interface {
	// Eval evaluates a JavaScript expression and decodes its JSON value into
	// out (nil discards it).
	Eval(ctx context.Context, js string, out any) error
	// Screenshot captures the viewport as PNG.
	Screenshot(ctx context.Context) ([]byte, error)
	// Loading reports whether a frame of the tab is loading a document.
	Loading() bool
}

// Settler decides when the page has settled after an action. The default is
// DOMQuiet; the actor plugs in a visual stability detector.
type Settler interface {
	Settle(ctx context.Context, p Page) (Settled, error)
}

// Settled is a Settler's verdict.
type Settled struct {
	// Stable is false when the settler gave up (its timeout) first.
	Stable bool
	// Waited is the time spent settling.
	Waited time.Duration
	// Score is the settler's confidence in [0, 1] (1 for DOMQuiet's stable).
	Score float64
	// Frame is the screenshot (PNG) the verdict was taken on, when the
	// settler took one; the observation then uses it instead of another.
	Frame []byte
	// FramePixels is Frame decoded, when the settler decoded it (to compare
	// it); the observation hands it on (Observation.ScreenshotPixels).
	FramePixels *image.RGBA
	// Observed is the page's observation (the value of ObserveJS) when the
	// settler read it in the round trip of its last check; the observation
	// then decodes it instead of reading the page again.
	Observed json.RawMessage
}

// DOMQuiet is the simple settler: the page has settled when no document is
// loading or about to be replaced (a link or a form the page followed), the
// document is complete, no fetch or XHR is in flight, and no DOM mutation
// happened for Quiet; it gives up after Timeout. With PageHints it
// also waits for the webenv page core's own async work (core.pending: the
// problem's load, event reports, spinners, lazy content, layout shifts) —
// privileged knowledge for the oracle, which must not act on a frame that
// is about to change; an agent's settler should not rely on it.
type DOMQuiet struct {
	Quiet     time.Duration // default 100ms
	Timeout   time.Duration // default 5s
	Poll      time.Duration // default 20ms
	PageHints bool
}

// Settle implements Settler. The waiting happens in the page
// (window.__wob.waitSettled, one round trip per second at most); the Go side
// adds what the page cannot see: a document about to load or loading.
func (s DOMQuiet) Settle(ctx context.Context, p Page) (Settled, error) {
	quiet, timeout, poll := s.Quiet, s.Timeout, s.Poll
	if quiet <= 0 {
		quiet = 100 * time.Millisecond
	}
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	if poll <= 0 {
		poll = 20 * time.Millisecond
	}
	start := time.Now()
	for {
		// The quiet window is also the grace for a navigation that an action
		// started but the browser has not reported yet.
		attempt := time.Now()
		if !p.Loading() {
			left := timeout - time.Since(start)
			wait := min(max(left, 0), time.Second)
			var res struct {
				OK bool `json:"ok"`
			}
			js := fmt.Sprintf(`window.__wob ? window.__wob.waitSettled(%d, %t, %d) : {ok: false}`, quiet.Milliseconds(), s.PageHints, wait.Milliseconds())
			// An error here is a document that went away mid-wait (a
			// navigation): look again.
			if err := p.Eval(ctx, js, &res); err == nil && res.OK && !p.Loading() {
				if d := quiet/2 - time.Since(start); d > 0 {
					if err := backoff.Sleep(ctx, d); err != nil {
						return Settled{Waited: time.Since(start)}, err
					}
					continue
				}
				return Settled{Stable: true, Waited: time.Since(start), Score: 1}, nil
			}
		}
		if err := ctx.Err(); err != nil {
			return Settled{Waited: time.Since(start)}, err
		}
		if time.Since(start) >= timeout {
			return Settled{Stable: false, Waited: time.Since(start)}, nil
		}
		// Loading, or the page answered at once (no helper, a document
		// going away): do not spin.
		if time.Since(attempt) < poll {
			if err := backoff.Sleep(ctx, poll); err != nil {
				return Settled{Waited: time.Since(start)}, err
			}
		}
	}
}
