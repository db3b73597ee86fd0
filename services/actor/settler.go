package actor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"strconv"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
	"github.com/asyncwebrl/asyncwebrl/services/internal/frame"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// Visual is the visual stability detector, an env.Settler. A page is a
// stable state when
//
//   - no document is loading or about to be replaced, the document is
//     complete and no fetch or XHR is in flight (the env's page helper);
//   - no CSS animation or transition is running (document.getAnimations:
//     a spinner costs no screenshots while it turns);
//   - no DOM mutation happened for Quiet (its MutationObserver); and
//   - on a page the DOM does not fully describe (a canvas, a video, a
//     frame, a plugin, an SVG animation, an image or a web font still
//     loading), two screenshots taken Interval apart differ by a mean
//     absolute pixel difference of at most MaxDiff (channels in [0, 1])
//     with no DOM mutation in between: this catches what the DOM does not
//     tell. While frames keep changing, the gap between them doubles up to
//     250ms, so an endless animation does not cost a screenshot every
//     Interval. On a page the DOM does describe, a DOM quiet for
//     Quiet+Interval (what a pair proves) with no animation running is
//     the stable state, and its one screenshot is the observation's frame
//     (AlwaysCompare compares frames on every page): the pair cost a
//     second screenshot on every step of every HTML task to confirm what
//     the DOM already said, and screenshots are what an executor spends
//     its CPU on.
//
// The text caret is hidden in every document (CaretCSS), so that a blinking
// caret in a focused field does not count as change; every other visible
// change does: screenshots of a still page are identical, so the default
// MaxDiff only forgives sub-pixel noise. A mean over the frame shrinks a
// small change as the viewport grows (a spinner is 0.07% of a 400x520
// page), which is why the default is far below any real change; raise it
// for pages with harmless endless animations.
//
// The wait for a calm page runs inside the page (calmScript, a promise that
// resolves when the page is calm), so it costs one DevTools round trip
// instead of a poll every few milliseconds; pages without that helper are
// polled every Poll. The verdict's frame is handed to the observation
// (env.Settled.Frame), so a stable step costs two screenshots, and so are
// its pixels when the pair decoded them (env.Settled.FramePixels): the
// wire frame's encoder does not decode that screenshot again.
//
// Score is 1 - diff/ScoreSpan of the last frame pair, at least 0: 1 for
// identical frames, 0 for a mean change of 1% or more, and 0 when the DOM
// never went quiet long enough to compare frames.
//
// Interval is at least two frame periods at 60 Hz: a pair closer than one
// frame can be the same frame twice. Two frames cannot tell a still page
// from an animation whose period divides their distance: a square moving
// x%50 repeats every 50 frames, which unpaced Chromium (1,488 frames/s
// measured) draws in 34 ms, and the settler test, whose browser was
// unpaced, judged it stable now and then in clean-clone CI. The actor
// paces its browsers (62 frames/s, a period of 800 ms against pairs at
// most maxGap apart) and so does the test now.
type Visual struct {
	Quiet    time.Duration // default 30ms
	Interval time.Duration // default 40ms
	MaxDiff  float64       // default 1e-6 (a thirtieth of one changed pixel in 160x210)
	Timeout  time.Duration // default 5s
	Poll     time.Duration // default 20ms
	// AlwaysCompare takes the frame pair on every page, also those the DOM
	// fully describes (default false: one frame there).
	AlwaysCompare bool
}

// ScoreSpan is the mean frame difference that scores 0.
const ScoreSpan = 0.01

// CaretCSS hides the text caret (see Visual); the actor installs it in every
// document of its tabs.
const CaretCSS = `*, *::before, *::after { caret-color: transparent !important; }`

// calmScript defines window.__awrlCalm(quietMs, describedMs, maxMs): a
// promise of the env helper's settleState() once no request is in flight,
// the document is complete, no navigation is pending, no CSS animation or
// transition is running (the Web Animations API) and the DOM has been
// quiet for quietMs (describedMs on a page the DOM fully describes, which
// settles on that alone), or after maxMs. It checks on in-page timers,
// sleeping until the quiet period can be over, so that a spinner costs no
// screenshots while it turns. described is false where something can
// change the picture without touching the DOM: a canvas, a video, a frame,
// a plugin, an SVG (SMIL) animation, an image or a web font still loading;
// the frame pair then catches what the DOM cannot tell.
const calmScript = `window.__awrlCalm = function (quietMs, describedMs, maxMs) {
  function animating() {
    if (!document.getAnimations) return false;
    var as = document.getAnimations();
    for (var i = 0; i < as.length; i++) if (as[i].playState === 'running') return true;
    return false;
  }
  function described() {
    if (document.querySelector('canvas, video, iframe, frame, embed, object, animate, animateTransform, animateMotion, set, marquee')) return false;
    if (document.fonts && document.fonts.status !== 'loaded') return false;
    var im = document.images;
    for (var i = 0; i < im.length; i++) if (!im[i].complete) return false;
    return true;
  }
  return new Promise(function (resolve) {
    var t0 = performance.now();
    (function check() {
      var w = window.__wob;
      if (!w || typeof w.settleState !== 'function') { resolve(null); return; }
      var st = w.settleState();
      var calm = st.ready === 'complete' && st.inflight <= 0 && !st.leaving;
      var left = maxMs - (performance.now() - t0);
      var need = quietMs;
      if (calm && st.since >= quietMs) {
        st.described = described();
        if (st.described) need = Math.max(quietMs, describedMs);
        // getAnimations flushes styles: ask only once the rest is calm.
        if (st.since >= need) { st.animating = animating(); calm = !st.animating; if (calm) { resolve(st); return; } }
      }
      if (left <= 0) { resolve(st); return; }
      setTimeout(check, Math.max(1, Math.min(left, calm ? need - st.since : 10)));
    })();
  });
};`

type settleState struct {
	Ready     string  `json:"ready"`
	Inflight  int     `json:"inflight"`
	Leaving   bool    `json:"leaving"`
	Since     float64 `json:"since"`
	Animating bool    `json:"animating"` // from calmScript only
	// Described: the DOM says all the page shows (from calmScript only;
	// false when unknown, which keeps the frame pair).
	Described bool `json:"described"`
}

func (st *settleState) calm() bool {
	return st.Ready == "complete" && st.Inflight <= 0 && !st.Leaving && !st.Animating
}

func (st *settleState) since() time.Duration {
	return time.Duration(st.Since * float64(time.Millisecond))
}

func (v Visual) withDefaults() Visual {
	if v.Quiet <= 0 {
		v.Quiet = 30 * time.Millisecond
	}
	if v.Interval <= 0 {
		v.Interval = 40 * time.Millisecond
	}
	if v.MaxDiff <= 0 {
		v.MaxDiff = 1e-6
	}
	if v.Timeout <= 0 {
		v.Timeout = 5 * time.Second
	}
	if v.Poll <= 0 {
		v.Poll = 20 * time.Millisecond
	}
	return v
}

// Settle implements env.Settler. It waits for a calm page quiet for
// Quiet-Interval, takes a frame, waits Interval, checks that the DOM stayed
// quiet since before that frame (and for Quiet in all), and takes a second
// one; identical enough frames end it. While frames keep changing (an
// animation) it goes on comparing a frame with the one before.
func (v Visual) Settle(ctx context.Context, p env.Page) (env.Settled, error) {
	v = v.withDefaults()
	start := time.Now()
	var (
		prev    []byte      // the previous frame, PNG; nil: none usable
		prevImg *image.RGBA // its pixels, decoded lazily
		prevAt  time.Time   // when its capture was requested
		score   float64
		lastErr error
	)
	firstQuiet := max(v.Quiet-v.Interval, 0)
	// A described page settles on DOM quiet alone, so the quiet asked of
	// it spans what a pair proves: from before the first frame to after
	// the second (Interval), and Quiet in all. It is waited for in the page,
	// where it costs no CPU; the pair's second screenshot did.
	describedQuiet := v.Quiet + v.Interval
	gap := v.Interval // between the frames of a pair; grows while they differ
	for {
		left := v.Timeout - time.Since(start)
		if left <= 0 {
			if lastErr != nil && score == 0 {
				return env.Settled{Waited: time.Since(start)}, fmt.Errorf("unable to compare frames: %w", lastErr)
			}
			return env.Settled{Stable: false, Waited: time.Since(start), Score: score}, nil
		}
		if err := ctx.Err(); err != nil {
			return env.Settled{Waited: time.Since(start), Score: score}, err
		}
		if p.Loading() {
			prev, prevImg = nil, nil
			if err := backoff.Sleep(ctx, min(v.Poll, left)); err != nil {
				return env.Settled{Waited: time.Since(start), Score: score}, err
			}
			continue
		}
		if prev == nil {
			gap = v.Interval
			// Wait in the page for calm, then take the first frame.
			st, ok := v.waitCalm(ctx, p, firstQuiet, describedQuiet, min(left, time.Second))
			if !ok || st.since() < firstQuiet {
				continue
			}
			calmAt := time.Now()
			shotAt := time.Now()
			shot, err := p.Screenshot(ctx)
			if err != nil {
				lastErr = err
				continue
			}
			if !v.AlwaysCompare && st.Described && st.since() >= describedQuiet {
				// The DOM tells all this page shows, and it was quiet. A
				// renderer starved of CPU runs the quiet check's timer
				// before the page's own overdue ones, so quiet is only
				// believed once the frame (which runs them) is taken and
				// the DOM is still quiet after it.
				// The same round trip reads the observation (env.ObserveJS)
				// the frame goes with.
				after, observed := afterCheck(ctx, p)
				if after.calm() && after.since() >= time.Since(calmAt) && !p.Loading() {
					return env.Settled{Stable: true, Waited: time.Since(start), Score: 1, Frame: shot, Observed: observed}, nil
				}
				continue
			}
			prev, prevImg, prevAt = shot, nil, shotAt
		}
		if err := backoff.Sleep(ctx, min(gap, left)); err != nil {
			return env.Settled{Waited: time.Since(start), Score: score}, err
		}
		// The state check and the second frame go out together: the
		// check proves no mutation since before the first frame up to
		// about the second; a change after it shows in the frame.
		var (
			st      settleState
			evalErr error
			evalAt  = time.Now()
			done    = make(chan struct{})
		)
		go func() {
			defer close(done)
			evalErr = p.Eval(ctx, `window.__wob ? window.__wob.settleState() : null`, &st)
		}()
		shotAt := time.Now()
		shot, err := p.Screenshot(ctx)
		<-done
		if evalErr != nil || !st.calm() || st.since() < evalAt.Sub(prevAt) || p.Loading() {
			prev, prevImg = nil, nil // activity since the first frame: start over
			continue
		}
		if err != nil {
			lastErr, prev, prevImg = err, nil, nil
			continue
		}
		d, img, err := frameDiff(prev, &prevImg, shot)
		if err != nil {
			lastErr, prev, prevImg = err, nil, nil
			continue
		}
		score = max(0, 1-d/ScoreSpan)
		if d <= v.MaxDiff && st.since() >= v.Quiet {
			return env.Settled{Stable: true, Waited: time.Since(start), Score: score, Frame: shot, FramePixels: img}, nil
		}
		// Still changing, with a quiet DOM (a canvas, a video, an
		// animation the page drives): compare less and less often.
		prev, prevImg, prevAt = shot, img, shotAt
		gap = min(2*gap, maxGap)
	}
}

// afterCheckJS reads the settle state and the observation in one evaluation.
const afterCheckJS = `window.__wob ? {state: window.__wob.settleState(), obs: ` + env.ObserveJS + `} : null`

// afterCheck reads the page's settle state and, in the same round trip, its
// observation (env.ObserveJS). When the observation fails (a page that
// throws in it) it reads the state alone, and the env's own observation
// reports the error.
func afterCheck(ctx context.Context, p env.Page) (settleState, json.RawMessage) {
	var both struct {
		State *settleState    `json:"state"`
		Obs   json.RawMessage `json:"obs"`
	}
	err := p.Eval(ctx, afterCheckJS, &both)
	if err == nil {
		if both.State == nil {
			return settleState{}, nil
		}
		return *both.State, both.Obs
	}
	var st settleState
	if err := p.Eval(ctx, `window.__wob ? window.__wob.settleState() : null`, &st); err != nil {
		return settleState{}, nil
	}
	return st, nil
}

// maxGap bounds the time between frames while a page keeps changing.
const maxGap = 250 * time.Millisecond

// waitCalm waits for a calm page quiet for quiet (described on a page the
// DOM fully describes), in the page when the actor's helper is there (one
// round trip), else by polling.
func (v Visual) waitCalm(ctx context.Context, p env.Page, quiet, described, wait time.Duration) (settleState, bool) {
	var st settleState
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	js := `window.__awrlCalm ? window.__awrlCalm(` + ms(quiet) + `, ` + ms(described) + `, ` + ms(wait) +
		`) : (window.__wob ? window.__wob.settleState() : null)`
	deadline := time.Now().Add(wait)
	for {
		st = settleState{}
		err := p.Eval(ctx, js, &st)
		if err == nil && st.calm() && st.since() >= quiet && !p.Loading() {
			return st, true
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return st, false
		}
		// Not calm yet: the helper gave up at wait, or is missing (poll),
		// or a navigation destroyed the page it ran in.
		if backoff.Sleep(ctx, v.Poll) != nil {
			return st, false
		}
	}
}

// frameDiff returns the mean absolute difference of two screenshots (PNG
// or JPEG) and the second one's pixels (those of the first when the bytes
// are identical, nil if it was never decoded). Identical bytes are
// identical frames (the encoders are deterministic), which is the common
// case of a stable page and needs no decoding; *prevImg caches the first
// screenshot's pixels.
func frameDiff(prev []byte, prevImg **image.RGBA, cur []byte) (float64, *image.RGBA, error) {
	if bytes.Equal(prev, cur) {
		return 0, *prevImg, nil
	}
	if *prevImg == nil {
		img, err := decodeScreenshot(prev)
		if err != nil {
			return 0, nil, err
		}
		*prevImg = img
	}
	img, err := decodeScreenshot(cur)
	if err != nil {
		return 0, nil, err
	}
	if !sameSize(*prevImg, img) {
		return 1, img, nil // a resize is a change
	}
	return meanAbsDiff(*prevImg, img), img, nil
}

// decodeScreenshot decodes a screenshot (PNG or JPEG) into RGBA pixels.
func decodeScreenshot(b []byte) (*image.RGBA, error) {
	img, err := frame.Decode(b, "", frame.MaxScreenshotSide)
	if err != nil {
		return nil, fmt.Errorf("unable to decode a screenshot: %w", err)
	}
	return img, nil
}

func sameSize(a, b *image.RGBA) bool { return a.Rect.Size() == b.Rect.Size() }

// meanAbsDiff is the mean absolute difference of the RGB channels of two
// frames of the same size, in [0, 1].
func meanAbsDiff(a, b *image.RGBA) float64 {
	w, h := a.Rect.Dx(), a.Rect.Dy()
	if w == 0 || h == 0 {
		return 0
	}
	var sum uint64
	for y := 0; y < h; y++ {
		ra := a.Pix[y*a.Stride : y*a.Stride+4*w]
		rb := b.Pix[y*b.Stride : y*b.Stride+4*w]
		for i := 0; i < len(ra); i += 4 {
			sum += absDiff(ra[i], rb[i]) + absDiff(ra[i+1], rb[i+1]) + absDiff(ra[i+2], rb[i+2])
		}
	}
	return float64(sum) / (255 * 3 * float64(w*h))
}

func absDiff(x, y uint8) uint64 {
	if x > y {
		return uint64(x - y)
	}
	return uint64(y - x)
}
