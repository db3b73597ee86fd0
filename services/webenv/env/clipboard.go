package env

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// A browser has one clipboard for all its tabs, and a copy and its paste
// are separate steps: with several executors on one Chromium (four by
// default), one tab's Control+c between another's copy and paste made that
// paste the wrong text (the MiniWoB++ solvers on three tabs failed
// copy-paste on every seed while copy-paste-2 ran beside it). So each Env
// keeps its own clipboard: a copy or cut records the text it takes, and a
// paste first puts that text back on the browser's clipboard, both under
// the browser's clipboard lock. The page still gets the real key events and
// Chromium's own copy and paste.

// clipOp is a combination's clipboard operation: 'c' copy, 'x' cut,
// 'v' paste, 0 none.
func (c keyCombo) clipOp() byte {
	if c.mods&(modCtrl|modMeta) == 0 || c.mods&modAlt != 0 || c.key == nil {
		return 0
	}
	switch strings.ToLower(c.key.Key) {
	case "c":
		return 'c'
	case "x":
		return 'x'
	case "v":
		return 'v'
	}
	return 0
}

// selectionJS is the text a copy would take: the focused field's selected
// part, else the document's selection.
const selectionJS = `(() => {
  const a = document.activeElement;
  if (a && (a.tagName === 'TEXTAREA' || a.tagName === 'INPUT')) {
    try { if (typeof a.selectionStart === 'number') return a.value.substring(a.selectionStart, a.selectionEnd); } catch (e) {}
  }
  return String(window.getSelection() || '');
})()`

// restoreJS puts text on the browser's clipboard through a copy event of
// its own (the page's handlers do not see it).
const restoreJS = `((t) => {
  const h = (ev) => { ev.clipboardData.setData('text/plain', t); ev.preventDefault(); ev.stopImmediatePropagation(); };
  window.addEventListener('copy', h, true);
  try { return document.execCommand('copy'); } finally { window.removeEventListener('copy', h, true); }
})(%s)`

// pressClip dispatches a clipboard combination's events with the Env's own
// clipboard (the caller holds nothing).
func (e *Env) pressClip(ctx context.Context, op byte, dispatch func() error) error {
	e.clipMu.Lock()
	defer e.clipMu.Unlock()
	switch op {
	case 'c', 'x':
		var text string
		if err := e.eval(ctx, selectionJS, &text); err != nil {
			return fmt.Errorf("unable to read the selection to copy: %w", err)
		}
		if err := dispatch(); err != nil {
			return err
		}
		if text != "" { // a copy of nothing leaves the clipboard as it was
			e.clip, e.hasClip = text, true
		}
		return nil
	default:
		if e.hasClip {
			text, _ := json.Marshal(e.clip)
			yes := true
			gesture := func(p *runtime.EvaluateParams) { p.UserGesture = &yes }
			ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(restoreJS, text), gesture))
			if err != nil {
				return fmt.Errorf("unable to put this tab's clipboard back: %w", jsError(err))
			}
			if !ok {
				return fmt.Errorf("unable to put this tab's clipboard back: the page refused the copy")
			}
		}
		return dispatch()
	}
}
