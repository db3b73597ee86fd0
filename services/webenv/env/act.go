package env

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
)

// A click waits up to hitWait after each of hitTries moves for its element
// to be under the pointer and hovered (about 250 ms in all, what a page's
// hover takes to settle: social-media's first hover of an icon in a new
// document takes ~260 ms with one move, a few ms with a second).
const (
	hitTries = 5
	hitWait  = 50 * time.Millisecond
)

// act executes one action on the page. With before non-nil, a click sets
// it to the page's fingerprint from before the click (agent.js's point reads
// it in the round trip that aims).
func (e *Env) act(ctx context.Context, a Action, before *string) error {
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	switch a.Type {
	case Click:
		var pt struct {
			X, Y float64
			DOM  bool
			FP   string
		}
		if err := e.eval(ctx, `window.__wob.point(`+js(a.BID)+`, `+js(before != nil)+`)`, &pt); err != nil {
			return err
		}
		if before != nil {
			*before = pt.FP
		}
		if pt.DOM {
			// No point of the viewport reaches the element (agent.js's
			// point says why).
			return e.eval(ctx, `window.__wob.domClick(`+js(a.BID)+`)`, nil)
		}
		// The hover may change the layout under the pointer (agent.js's
		// waitHit says how): press once the element is under the pointer
		// and hovered. A hover left stale by a layout change is refreshed
		// only by the next move, so each wait is short and the pointer
		// moves again, re-aimed where the element now is (or where it was,
		// while no point reaches it: a hover flicker shrinks it to
		// nothing). After the last wait the click aims once more and
		// presses.
		for try := 0; try < hitTries; try++ {
			if err := e.mouse(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: pt.X, Y: pt.Y}); err != nil {
				return err
			}
			var back bool
			if err := e.eval(ctx, fmt.Sprintf(`window.__wob.waitHit(%s, %g, %g, %d)`, js(a.BID), pt.X, pt.Y, hitWait.Milliseconds()), &back); err != nil {
				return err
			}
			if back {
				return e.press(ctx, pt.X, pt.Y)
			}
			// An element aim finds nowhere (or invisible) now may be
			// mid-flicker: the last point stays until the final aim.
			again := pt
			if err := e.eval(ctx, `window.__wob.point(`+js(a.BID)+`, false)`, &again); err == nil && !again.DOM {
				pt = again
			}
		}
		if err := e.eval(ctx, `window.__wob.point(`+js(a.BID)+`, false)`, &pt); err != nil {
			return err
		}
		if pt.DOM {
			return e.eval(ctx, `window.__wob.domClick(`+js(a.BID)+`)`, nil)
		}
		return e.click(ctx, pt.X, pt.Y)
	case Fill:
		var how string
		if err := e.eval(ctx, `window.__wob.prepareFill(`+js(a.BID)+`, `+js(a.Text == "")+`, `+js(a.Text)+`)`, &how); err != nil {
			return err
		}
		if a.Text == "" || how == "set" {
			return nil
		}
		_, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: a.Text})
		return err
	case SelectOption:
		return e.eval(ctx, `window.__wob.select(`+js(a.BID)+`, `+js(a.Options)+`)`, nil)
	case Scroll:
		// What is under the wheel scrolls: a list at its element, else
		// the page.
		x, y := float64(e.viewport.W)/2, float64(e.viewport.H)/2
		switch {
		case a.BID != "":
			var pt struct{ X, Y float64 }
			if err := e.eval(ctx, `window.__wob.wheelAt(`+js(a.BID)+`)`, &pt); err != nil {
				return err
			}
			x, y = pt.X, pt.Y
		case a.X != 0 || a.Y != 0:
			x, y = a.X, a.Y
		}
		_, err := chromedp.Call(ctx, mouseWheel, wheelParams{Type: input.DispatchMouseEventTypeMouseWheel, X: x, Y: y, DeltaX: a.DX, DeltaY: a.DY})
		return err
	case Press:
		combo, err := parseKeyCombo(a.Key)
		if err != nil {
			return err
		}
		if a.BID != "" {
			if err := e.eval(ctx, `window.__wob.focus(`+js(a.BID)+`)`, nil); err != nil {
				return err
			}
		}
		dispatch := func() error {
			for _, ev := range combo.events() {
				if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, ev); err != nil {
					return err
				}
			}
			return nil
		}
		if op := combo.clipOp(); op != 0 {
			return e.pressClip(ctx, op, dispatch)
		}
		return dispatch()
	case Goto:
		var cur string
		_ = e.eval(ctx, `location.href`, &cur)
		base, err := url.Parse(cur)
		if err != nil || cur == "" {
			base = e.base
		}
		u, err := base.Parse(a.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("goto: bad url %q (want http or https)", clip(a.URL, 80))
		}
		res, err := chromedp.Call(ctx, page.Navigate, page.NavigateParams{URL: u.String()})
		if err != nil {
			return err
		}
		if res.ErrorText != "" {
			return fmt.Errorf("goto %s: %s", u, res.ErrorText)
		}
		return nil
	case GoBack:
		h, err := chromedp.Call(ctx, page.GetNavigationHistory, cdp.Empty{})
		if err != nil {
			return err
		}
		if h.CurrentIndex <= 0 || int(h.CurrentIndex) >= len(h.Entries) {
			return errors.New("go_back: no previous page")
		}
		_, err = chromedp.Call(ctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: h.Entries[h.CurrentIndex-1].ID})
		return err
	case MouseClick:
		// A point may be core.js's cover once the episode is over: a
		// press there would start an unseeded episode.
		if err := e.eval(ctx, `window.__wob.live()`, nil); err != nil {
			return err
		}
		return e.click(ctx, a.X, a.Y)
	case DblClick:
		x, y, err := e.aim(ctx, a.BID)
		if err != nil {
			return err
		}
		if err := e.mouse(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y}); err != nil {
			return err
		}
		// Two clicks, the second with click count 2: the browser fires
		// click, click, dblclick, as for a user.
		for n := int64(1); n <= 2; n++ {
			for _, t := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
				if err := e.mouse(ctx, input.DispatchMouseEventParams{Type: t, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: buttonsOf(t), ClickCount: n}); err != nil {
					return err
				}
			}
		}
		return nil
	case Hover:
		x, y, err := e.aim(ctx, a.BID)
		if err != nil {
			return err
		}
		return e.mouse(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y})
	case DragAndDrop:
		fx, fy, err := e.aim(ctx, a.BID)
		if err != nil {
			return err
		}
		tx, ty, err := e.aim(ctx, a.ToBID)
		if err != nil {
			return err
		}
		return e.drag(ctx, fx, fy, tx, ty)
	case MouseDragAndDrop:
		if err := e.eval(ctx, `window.__wob.live()`, nil); err != nil {
			return err
		}
		return e.drag(ctx, a.X, a.Y, a.ToX, a.ToY)
	case MouseMove:
		return e.mouse(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: a.X, Y: a.Y})
	case Noop:
		return backoff.Sleep(ctx, time.Duration(min(max(a.WaitMS, 0), maxNoopWait))*time.Millisecond)
	case KeyboardType:
		return e.typeKeys(ctx, a.Text)
	case SendMsg:
		e.messages = append(e.messages, a.Text)
		return e.eval(ctx, `(window.core && typeof core.userMessage === 'function') ? (core.userMessage(`+js(a.Text)+`), true) : false`, nil)
	}
	return fmt.Errorf("unknown action type %q", a.Type)
}

// wheelParams is Input.dispatchMouseEvent's parameters for a wheel event:
// the protocol wants deltaX and deltaY present, and cdproto's type drops a
// zero delta (omitzero).
type wheelParams struct {
	Type   input.DispatchMouseEventType `json:"type"`
	X      float64                      `json:"x"`
	Y      float64                      `json:"y"`
	DeltaX float64                      `json:"deltaX"`
	DeltaY float64                      `json:"deltaY"`
}

var mouseWheel = cdp.Command[wheelParams, cdp.Empty]{Method: input.CommandDispatchMouseEvent}

// click presses and releases the left button at (x, y), after moving there.
func (e *Env) click(ctx context.Context, x, y float64) error {
	if err := e.mouse(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y}); err != nil {
		return err
	}
	return e.press(ctx, x, y)
}

// press presses and releases the left button at (x, y), where the pointer
// already is.
func (e *Env) press(ctx context.Context, x, y float64) error {
	steps := []input.DispatchMouseEventParams{
		{Type: input.DispatchMouseEventTypeMousePressed, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1},
		{Type: input.DispatchMouseEventTypeMouseReleased, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: 1},
	}
	for _, s := range steps {
		if err := e.mouse(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// aim returns the viewport point where element bid can be reached by the
// pointer (agent.js's point); an element no point reaches is an error:
// hovers and drags have no DOM fallback.
func (e *Env) aim(ctx context.Context, bid string) (x, y float64, err error) {
	b, _ := json.Marshal(bid)
	var pt struct {
		X, Y float64
		DOM  bool
	}
	if err := e.eval(ctx, `window.__wob.point(`+string(b)+`, false)`, &pt); err != nil {
		return 0, 0, err
	}
	if pt.DOM {
		return 0, 0, fmt.Errorf("no point of the viewport reaches element %q", clip(bid, 20))
	}
	return pt.X, pt.Y, nil
}

// dragSteps is the number of pointer moves between a drag's press and
// release: pages that track the drag (jQuery UI, MiniWoB++'s drag tasks)
// see it move, not jump.
const dragSteps = 8

// drag presses the left button at (fx, fy), moves to (tx, ty) in
// dragSteps, and releases there.
func (e *Env) drag(ctx context.Context, fx, fy, tx, ty float64) error {
	if err := e.mouse(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: fx, Y: fy}); err != nil {
		return err
	}
	if err := e.mouse(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMousePressed, X: fx, Y: fy, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1}); err != nil {
		return err
	}
	for i := 1; i <= dragSteps; i++ {
		f := float64(i) / dragSteps
		x, y := fx+(tx-fx)*f, fy+(ty-fy)*f
		if err := e.mouse(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: 1}); err != nil {
			return err
		}
	}
	// Chromium extends a drag's text selection on the frame after a move:
	// released at once, the selection stopped a glyph short of the last
	// move (highlight-text, seed 5). A frame's pause lets it catch up.
	if err := backoff.Sleep(ctx, dragSettle); err != nil {
		return err
	}
	return e.mouse(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseReleased, X: tx, Y: ty, Button: input.MouseButtonLeft, ClickCount: 1})
}

// dragSettle is the pause between a drag's last move and its release.
const dragSettle = 50 * time.Millisecond

// buttonsOf is the buttons held during an event of type t (the left one
// while pressed).
func buttonsOf(t input.DispatchMouseEventType) int64 {
	if t == input.DispatchMouseEventTypeMousePressed {
		return 1
	}
	return 0
}

// mouse dispatches one mouse event.
func (e *Env) mouse(ctx context.Context, s input.DispatchMouseEventParams) error {
	if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, s); err != nil {
		return fmt.Errorf("unable to dispatch %s at (%.0f, %.0f): %w", s.Type, s.X, s.Y, err)
	}
	return nil
}

// typeKeys types text into the focused element a character at a time, as
// Playwright's keyboard.type does: a character on the keyboard is its key
// pressed (parseKeyCombo: its down and up events, with Shift for a shifted
// one); any other is inserted as text, with no key events.
func (e *Env) typeKeys(ctx context.Context, text string) error {
	for _, r := range text {
		c, err := parseKeyCombo(string(r))
		if err != nil {
			if _, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: string(r)}); err != nil {
				return err
			}
			continue
		}
		for _, ev := range c.events() {
			if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, ev); err != nil {
				return err
			}
		}
	}
	return nil
}
