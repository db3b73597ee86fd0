package oracle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/instruction"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// formSolvers: tasks of forms, text read off the page, mail and search: typed values, lists, tables.
var formSolvers = map[string]MiniWoBSolver{
	"email-inbox":                 formEmail(""),
	"email-inbox-delete":          formEmail(""),
	"email-inbox-important":       formEmail(""),
	"email-inbox-reply":           formEmail(""),
	"email-inbox-forward":         formEmail(""),
	"email-inbox-star-reply":      formEmail(""),
	"email-inbox-noscroll":        formEmail(""),
	"email-inbox-nl-turk":         formEmail(""),
	"email-inbox-forward-nl":      formEmail("forward"),
	"email-inbox-forward-nl-turk": formEmail("forward"),
	"login-user-popup":            formLoginPopup,
	"read-table": func(ctx context.Context, p *Play) error {
		key, err := p.Between("Enter the value of ", " into the text field")
		if err != nil {
			return err
		}
		val, err := formTableValue(ctx, p, key)
		if err != nil {
			return err
		}
		return steps(func() error { return p.By(ctx, "#tt", fill(val)) }, func() error { return p.By(ctx, submit, click) })
	},
	"read-table-2": func(ctx context.Context, p *Play) error {
		// Each field's label names a row of the table ("Color:").
		for _, n := range []string{"1", "2"} {
			var label string
			if err := p.Read(ctx, `document.querySelector('#ll`+n+`').textContent`, &label); err != nil {
				return err
			}
			val, err := formTableValue(ctx, p, strings.TrimSuffix(strings.TrimSpace(label), ":"))
			if err != nil {
				return err
			}
			if err := p.By(ctx, "#tt"+n, fill(val)); err != nil {
				return err
			}
		}
		return p.By(ctx, submit, click)
	},
	"copy-paste": func(ctx context.Context, p *Play) error {
		return formCopy(ctx, p, "#to-copy")
	},
	"copy-paste-2": func(ctx context.Context, p *Play) error {
		pos, err := p.Between("Copy the text from the ", " text area")
		if err != nil {
			return err
		}
		i := strings.Index("1st2nd3rd", pos)
		if i < 0 || len(pos) != 3 {
			return fmt.Errorf("unknown position %q", pos)
		}
		return formCopy(ctx, p, fmt.Sprintf("#text-%d", i/3+1))
	},
	"scroll-text": func(ctx context.Context, p *Play) error {
		// Scrolled to its end, the text area shows its last word (the
		// observation's value of a textarea is the part in view); typed
		// without its punctuation (the page compares letters and digits
		// only).
		if err := formScrollEnd(ctx, p, "#text-area", true); err != nil {
			return err
		}
		var text string
		if err := p.Read(ctx, `document.querySelector('#text-area').value`, &text); err != nil {
			return err
		}
		ws := strings.Fields(text)
		if len(ws) == 0 {
			return errors.New("the text area is empty")
		}
		w := regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(ws[len(ws)-1], "")
		return steps(func() error { return p.By(ctx, "#answer-input", fill(w)) }, func() error { return p.By(ctx, submit, click) })
	},
	"scroll-text-2": func(ctx context.Context, p *Play) error {
		dir, err := p.Between("Scroll the textarea to the ", " of the text")
		if err != nil {
			return err
		}
		if err := formScrollEnd(ctx, p, "#text-area", dir == "bottom"); err != nil {
			return err
		}
		return p.By(ctx, submit, click)
	},
	"use-autocomplete":         formAutocomplete,
	"use-autocomplete-nodelay": formAutocomplete,
	"social-media": func(ctx context.Context, p *Play) error {
		user, err := p.Between("For the user ", ", click on")
		if err != nil {
			return err
		}
		label, err := p.Quote(0)
		if err != nil {
			return err
		}
		class, ok := formSocialClass[label]
		if !ok {
			return fmt.Errorf("unknown button %q", label)
		}
		post := formPost(user, 0)
		if class == "reply" || class == "retweet" || class == "like" {
			return formClick(ctx, p, formIn(post, ".controls ."+class))
		}
		// The other buttons are in the post's "more" menu.
		return steps(func() error { return formClick(ctx, p, formIn(post, ".controls .more")) },
			func() error { return formClick(ctx, p, formIn(post, ".controls li."+class)) })
	},
	"social-media-all": func(ctx context.Context, p *Play) error {
		m := regexp.MustCompile(`button on all posts by (.+) and then click Submit`).FindStringSubmatch(p.Obs.Instruction)
		if m == nil {
			return fmt.Errorf("unable to read the user of %q", p.Obs.Instruction)
		}
		return formSocialSome(ctx, p, m[1], -1)
	},
	"social-media-some": func(ctx context.Context, p *Play) error {
		m := regexp.MustCompile(`button on (\d+) posts? by (.+) and then click Submit`).FindStringSubmatch(p.Obs.Instruction)
		if m == nil {
			return fmt.Errorf("unable to read the count and the user of %q", p.Obs.Instruction)
		}
		n, _ := strconv.Atoi(m[1])
		return formSocialSome(ctx, p, m[2], n)
	},
	"search-engine": func(ctx context.Context, p *Play) error {
		q, err := p.Quote(0)
		if err != nil {
			return err
		}
		pos, err := p.Between("click the ", " search result")
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(strings.TrimRight(pos, "stndrdth"))
		if err != nil || n < 1 {
			return fmt.Errorf("unable to read the position %q", pos)
		}
		// Three results a page: the n-th is on page (n-1)/3+1.
		page, k := (n-1)/3+1, (n-1)%3
		if err := steps(func() error { return p.By(ctx, "#search-text", fill(q)) }, func() error { return p.By(ctx, "#search", click) }); err != nil {
			return err
		}
		if page > 1 {
			if err := formClick(ctx, p, fmt.Sprintf(`[...document.querySelectorAll('#pagination a')].find(a => a.textContent.trim() === %q)`, strconv.Itoa(page))); err != nil {
				return err
			}
		}
		return formClick(ctx, p, fmt.Sprintf(`document.querySelectorAll('#page-content a')[%d]`, k))
	},
	"phone-book": func(ctx context.Context, p *Play) error {
		m := regexp.MustCompile(`^Find (.+) in the contact book and click on their (phone|email|address)`).FindStringSubmatch(p.Obs.Instruction)
		if m == nil {
			return fmt.Errorf("unable to read the contact of %q", p.Obs.Instruction)
		}
		// One contact a page: the next page until the name is shown.
		for range 6 {
			var name string
			if err := p.Read(ctx, `(document.querySelector('#contact .name') || {}).textContent || ''`, &name); err != nil {
				return err
			}
			if strings.TrimSpace(name) == m[1] {
				return formClick(ctx, p, `document.querySelector('#contact a.`+m[2]+`')`)
			}
			if err := formClick(ctx, p, `[...document.querySelectorAll('#pagination a')].find(a => a.textContent.trim() === '>')`); err != nil {
				return err
			}
		}
		return fmt.Errorf("no contact %q in the book", m[1])
	},
	"buy-ticket": func(ctx context.Context, p *Play) error {
		want, err := p.Between("Buy the ticket with the ", ".")
		if err != nil {
			return err
		}
		i, err := formPickFlight(ctx, p, ".flight", ".buy-ticket", want)
		if err != nil {
			return err
		}
		return formClick(ctx, p, fmt.Sprintf(`document.querySelectorAll('.flight')[%d].querySelector('.buy-ticket')`, i))
	},
	"order-food":      formOrderFood,
	"form-sequence-2": formSequence2,
	"form-sequence-3": func(ctx context.Context, p *Play) error {
		opt, err := p.Between("Choose ", " from the dropdown")
		if err != nil {
			return err
		}
		btn, err := p.Quote(0)
		if err != nil {
			return err
		}
		// A selectric dropdown: the select is hidden behind a list that
		// opens on a click.
		item := fmt.Sprintf(`[...document.querySelectorAll('.selectric-items li')].find(l => l.textContent.trim() === %q && l.getClientRects().length > 0)`, opt)
		return steps(func() error { return p.By(ctx, ".selectric-wrapper .selectric", click) },
			func() error { return formWait(ctx, p, `!!(`+item+`)`, 3*time.Second) },
			func() error { return p.ByJS(ctx, item, click) },
			func() error { return p.On(ctx, "button", btn, click) })
	},
	"sign-agreement": func(ctx context.Context, p *Play) error {
		if strings.HasPrefix(p.Obs.Instruction, "Click the cancel button") {
			return p.By(ctx, "#cancel", click)
		}
		q := p.Quoted()
		if len(q) < 2 {
			return fmt.Errorf("the instruction %q names no name and button", p.Obs.Instruction)
		}
		// The form opens once the agreement is read to its end.
		if err := formScrollEnd(ctx, p, "#text-area", true); err != nil {
			return err
		}
		if err := formWait(ctx, p, `!document.querySelector('#name').disabled`, 2*time.Second); err != nil {
			return err
		}
		return steps(func() error { return p.By(ctx, "#name", fill(q[0])) },
			func() error { return p.By(ctx, "#"+strings.ToLower(q[1]), click) })
	},
	"terminal":            formTerminal,
	"book-flight":         formBookFlight,
	"book-flight-nodelay": formBookFlight,
	"simple-algebra": func(ctx context.Context, p *Play) error {
		var prob string
		if err := p.Read(ctx, `document.querySelector('#math-problem').textContent`, &prob); err != nil {
			return err
		}
		x, err := formSolveX(prob)
		if err != nil {
			return err
		}
		return steps(func() error { return p.By(ctx, "#math-answer", fill(strconv.Itoa(x))) }, func() error { return p.By(ctx, submit, click) })
	},
	"text-editor": formTextEditor,
}

// formWait takes short noops until the JavaScript condition cond holds,
// for at most timeout (a menu that opens after a delay).
func formWait(ctx context.Context, p *Play, cond string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		if err := p.Read(ctx, `!!(`+cond+`)`, &ok); err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not come in %s", cond, timeout)
		}
		if err := p.Do(ctx, env.Action{Type: env.Noop, WaitMS: 100}); err != nil {
			return err
		}
	}
}

// formIn is the element css finds in the element of the expression el.
func formIn(el, css string) string {
	return fmt.Sprintf(`(() => { const e = %s; return e ? e.querySelector(%q) : null; })()`, el, css)
}

// formClick clicks the element a JavaScript expression finds, once
// scrolled into view as a reader scrolls (formReveal). An element the
// policy cannot pick (one the observations do not list, as a link without
// an address that a script listens to: phone-book's, the datepicker's
// arrows; or one past the elements it keeps: a day of the datepicker) is
// clicked at a point of its first line box.
func formClick(ctx context.Context, p *Play, el string) error {
	if err := formReveal(ctx, p, el); err != nil {
		return err
	}
	return formClickShown(ctx, p, el)
}

// formClickShown is formClick on an element already in view.
func formClickShown(ctx context.Context, p *Play, el string) error {
	var at *struct {
		BID  string
		X, Y float64
	}
	if err := p.Read(ctx, `(() => { const e = (`+el+`); if (!e) return null; const r = e.getClientRects()[0] || e.getBoundingClientRect();
		`+formSnapJS+`
		return {bid: e.getAttribute('bid') || '', x: snap(r.left, r.right, (r.left + r.right) / 2, innerWidth),
			y: snap(r.top, r.bottom, (r.top + r.bottom) / 2, innerHeight)}; })()`, &at); err != nil {
		return err
	}
	if at == nil {
		return fmt.Errorf("no element is %s", el)
	}
	if at.BID != "" && formKept(p, at.BID) {
		return p.Do(ctx, env.Action{Type: env.Click, BID: at.BID})
	}
	return p.Do(ctx, env.Action{Type: env.MouseClick, X: at.X, Y: at.Y})
}

// formSnapJS defines snap(lo, hi, want, side): the point of [lo, hi) nearest
// to want where the policy's point head acts (the centres of 64 positions
// across a side of the viewport), or want when none is inside.
const formSnapJS = `const snap = (lo, hi, want, side) => {
	const g = side / 64;
	let best = want, d = Infinity;
	for (let k = Math.floor(lo / g) - 1; k <= Math.ceil(hi / g); k++) {
		const c = (k + 0.5) * g;
		if (c > lo + 0.2 && c < hi - 0.2 && Math.abs(c - want) < d) { best = c; d = Math.abs(c - want); }
	}
	return best;
};`

// formKept says whether the policy keeps element bid of the newest
// observation among the 32 it chooses from: those whose box meets the
// viewport first, then the others, each in the page's order.
func formKept(p *Play, bid string) bool {
	W, H := p.Obs.Viewport.W, p.Obs.Viewport.H
	n := 0
	for pass := range 2 {
		for _, el := range p.Obs.Elements {
			b := el.Box
			if in := b.X < W && b.Y < H && b.X+b.W > 0 && b.Y+b.H > 0; in != (pass == 0) {
				continue
			}
			if n == 32 {
				return false
			}
			if el.BID == bid {
				return true
			}
			n++
		}
	}
	return false
}

// formRevealJS says whether the element of the expression target shows
// whole in every box that scrolls around it and in the viewport; if not,
// which listed element to turn the wheel at (one that shows in the box
// to scroll and scrolls with it: a row of a list), which way, and where
// the box's scroll is.
func formRevealJS(target string) string {
	return `(() => {
		const t = (` + target + `);
		if (!t) return {state: 'none'};
		const H = innerHeight, W = innerWidth;
		const scroller = el => {
			for (let s = el.parentElement; s && s !== document.body && s !== document.documentElement; s = s.parentElement) {
				const o = getComputedStyle(s).overflowY;
				if ((o === 'auto' || o === 'scroll') && s.scrollHeight > s.clientHeight + 1) return s;
			}
			return null;
		};
		const view = s => {
			if (!s) return {top: 0, bottom: H};
			const r = s.getBoundingClientRect();
			return {top: r.top + s.clientTop, bottom: r.top + s.clientTop + s.clientHeight};
		};
		const r = t.getBoundingClientRect();
		let s = scroller(t), v;
		for (;;) {
			v = view(s);
			if (r.top < v.top - 1 || r.bottom > v.bottom + 1) break;
			if (!s) return {state: 'in'};
			s = scroller(s);
		}
		const top = Math.max(0, v.top), bottom = Math.min(H, v.bottom);
		let wheel = null;
		for (const e of document.querySelectorAll('[bid]')) {
			const b = e.getBoundingClientRect();
			if (b.width <= 0 || b.height <= 0 || b.top < top || b.bottom > bottom || b.left < 0 || b.right > W) continue;
			if (getComputedStyle(e).visibility === 'hidden') continue;
			if (e === s || scroller(e) === s) { wheel = e; break; }
		}
		if (!wheel) return {state: 'stuck'};
		return {state: 'scroll', bid: wheel.getAttribute('bid'), down: r.bottom > v.bottom, pos: s ? s.scrollTop : scrollY};
	})()`
}

// formReveal scrolls the box that hides the element of the expression
// target (a list, the page) until it shows whole, as a reader brings a
// row into view before clicking it: the wheel at a row of the box, half a
// screen a turn (the policy's scroll). A box that does not move ends it;
// the click then scrolls the element into view itself, as it does for one
// above (the policy's wheel turns down only).
func formReveal(ctx context.Context, p *Play, target string) error {
	last := -1.0
	for range 30 {
		var st struct {
			State string
			BID   string
			Down  bool
			Pos   float64
		}
		if err := p.Read(ctx, formRevealJS(target), &st); err != nil {
			return err
		}
		if st.State != "scroll" || st.Pos == last || !st.Down {
			// Up is not the policy's scroll (its wheel turns down): an
			// element above is left to the click, which scrolls to it.
			return nil
		}
		last = st.Pos
		if err := p.Do(ctx, formScroll(p, st.BID, st.Down)); err != nil {
			return err
		}
	}
	return nil
}

// formScroll is a turn of the wheel at element bid: half the viewport
// down (or up), the policy's scroll.
func formScroll(p *Play, bid string, down bool) env.Action {
	dy := float64(p.Obs.Viewport.H) / 2
	if dy <= 0 {
		dy = 105
	}
	if !down {
		dy = -dy
	}
	return env.Action{Type: env.Scroll, BID: bid, DY: dy}
}

// formScrollEnd scrolls the text area css finds to its bottom or its top,
// by turns of the wheel at it.
func formScrollEnd(ctx context.Context, p *Play, css string, bottom bool) error {
	bid, err := p.Env.QueryBID(ctx, css, findWait)
	if err != nil {
		return err
	}
	type pos struct{ Top, Max float64 }
	read := func() (pos, error) {
		var at pos
		err := p.Read(ctx, `(() => { const t = document.querySelector(`+strconv.Quote(css)+`); return {top: t.scrollTop, max: t.scrollHeight - t.clientHeight}; })()`, &at)
		return at, err
	}
	for range 40 {
		at, err := read()
		if err != nil {
			return err
		}
		if bottom && at.Top >= at.Max-1 || !bottom && at.Top <= 0 {
			return nil
		}
		// Up is the keys': the policy's wheel turns down only.
		a := formScroll(p, bid, bottom)
		if !bottom {
			a = env.Action{Type: env.Press, BID: bid, Key: "Control+Home"}
		}
		if err := p.Do(ctx, a); err != nil {
			return err
		}
	}
	return fmt.Errorf("unable to scroll %s to its end", css)
}

// formTableValue is the value of the table row whose first cell is key.
func formTableValue(ctx context.Context, p *Play, key string) (string, error) {
	var val *string
	if err := p.Read(ctx, fmt.Sprintf(`(() => { const r = [...document.querySelectorAll('#tab tr')].find(r => r.cells[0].textContent.trim() === %q); return r ? r.cells[1].textContent : null; })()`, key), &val); err != nil {
		return "", err
	}
	if val == nil {
		return "", fmt.Errorf("no row %q in the table", key)
	}
	return *val, nil
}

// formCopy types the text of the text area css finds into the answer box
// and submits. The text is the area's whole value, its last space too (the
// page compares it exactly; the policy's copies of a field's value are
// trimmed, so this fill is one it cannot express).
func formCopy(ctx context.Context, p *Play, css string) error {
	// Through the clipboard, as a person does: the text's runs of spaces
	// and its line breaks, which the page compares, are not what the
	// observation's collapsed value shows.
	press := func(css, key string) func() error {
		return func() error { return p.By(ctx, css, env.Action{Type: env.Press, Key: key}) }
	}
	return steps(press(css, "Control+a"), press(css, "Control+c"), press("#answer-input", "Control+v"),
		func() error { return p.By(ctx, submit, click) })
}

// formLoginPopup logs in past login-user-popup's popup: it opens when a
// field is focused (so the first fill of that field may be lost) and
// disables the form until it is cancelled.
func formLoginPopup(ctx context.Context, p *Play) error {
	q := p.Quoted()
	if len(q) < 2 {
		return fmt.Errorf("the instruction %q names no username and password", p.Obs.Instruction)
	}
	cancel := func() error {
		var open bool
		if err := p.Read(ctx, `!!document.querySelector('#popup-cancel')`, &open); err != nil || !open {
			return err
		}
		return p.By(ctx, "#popup-cancel", click)
	}
	for i, f := range []string{"#username", "#password"} {
		for try := 0; ; try++ {
			var v string
			if err := p.Read(ctx, `document.querySelector(`+strconv.Quote(f)+`).value`, &v); err != nil {
				return err
			}
			if v == q[i] {
				break
			}
			if try == 3 {
				return fmt.Errorf("unable to fill %s", f)
			}
			if err := steps(cancel, func() error { return p.By(ctx, f, fill(q[i])) }); err != nil {
				return err
			}
		}
	}
	return steps(cancel, func() error { return p.By(ctx, submit, click) })
}

// formAutocomplete types the start the instruction gives, waits for the
// suggestions and picks the one that also ends as asked.
func formAutocomplete(ctx context.Context, p *Play) error {
	q := p.Quoted()
	if len(q) == 0 {
		return fmt.Errorf("the instruction %q gives no start", p.Obs.Instruction)
	}
	start, end := q[0], ""
	if len(q) > 1 {
		end = q[1]
	}
	item := fmt.Sprintf(`[...document.querySelectorAll('.ui-autocomplete .ui-menu-item-wrapper')].find(e => e.offsetParent !== null && e.textContent.startsWith(%q) && e.textContent.endsWith(%q))`, start, end)
	return steps(func() error { return p.By(ctx, "#tags", fill(start)) },
		func() error { return formWait(ctx, p, item, 5*time.Second) },
		func() error { return formPick(ctx, p, "#tags", item) },
		func() error { return p.By(ctx, submit, click) })
}

// formPick clicks the suggestion item of the field css finds, with the
// pointer off the suggestions just before. A jQuery UI menu that opens (or
// scrolls) under a resting pointer takes the item there as hovered on the
// pointer's next move, wherever it goes (isNewMenu): moved straight to
// another item and clicked, the menu picks the first one (book-flight seed
// 308 booked "... - Municipal Airport (FNL)" for "... - Bus service";
// use-autocomplete seed 417 entered Malaysia for Malta). A move to the
// field, after any scroll, spends that.
func formPick(ctx context.Context, p *Play, css, item string) error {
	return steps(func() error { return formReveal(ctx, p, item) },
		func() error { return p.By(ctx, css, env.Action{Type: env.Hover}) },
		func() error { return formClickShown(ctx, p, item) })
}

// formSocialClass maps social-media's button names to their elements'
// classes.
var formSocialClass = map[string]string{
	"Reply": "reply", "Retweet": "retweet", "Like": "like", "Share": "share",
	"Share via DM": "share", "Copy link to Tweet": "copy", "Embed Tweet": "embed",
	"Mute": "menu-user", "Block": "block-user", "Report": "report",
}

// formPost is the i-th post by user (i < 0: the posts' count).
func formPost(user string, i int) string {
	return fmt.Sprintf(`[...document.querySelectorAll('#area .media')].filter(m => m.querySelector('.username').textContent === %q)[%d]`, user, i)
}

// formSocialSome clicks the button the instruction quotes on n of user's
// posts (n < 0: all of them), then Submit.
func formSocialSome(ctx context.Context, p *Play, user string, n int) error {
	label, err := p.Quote(0)
	if err != nil {
		return err
	}
	class, ok := formSocialClass[label]
	if !ok {
		return fmt.Errorf("unknown button %q", label)
	}
	var count int
	if err := p.Read(ctx, fmt.Sprintf(`[...document.querySelectorAll('#area .media')].filter(m => m.querySelector('.username').textContent === %q).length`, user), &count); err != nil {
		return err
	}
	if n < 0 {
		n = count
	}
	if n > count {
		return fmt.Errorf("%s has %d posts, want %d", user, count, n)
	}
	for i := range n {
		if err := formClick(ctx, p, formIn(formPost(user, i), ".controls ."+class)); err != nil {
			return err
		}
	}
	return formClick(ctx, p, `document.querySelector('#submitRow button')`)
}

// formPickFlight returns the index of the flight (rows css finds, priced
// on their button book) the instruction asks for: the cheapest or most
// expensive by the price shown, the shortest or longest by the duration
// shown.
func formPickFlight(ctx context.Context, p *Play, css, book, want string) (int, error) {
	var rows []struct{ Price, Dur string }
	if err := p.Read(ctx, fmt.Sprintf(`[...document.querySelectorAll(%q)].map(f => ({price: f.querySelector(%q).textContent, dur: f.querySelector('.time-duration').textContent}))`, css, book), &rows); err != nil {
		return 0, err
	}
	best, bestV := -1, 0
	for i, r := range rows {
		var v int
		switch {
		case strings.Contains(want, "cost") || strings.Contains(want, "cheapest"):
			j := strings.LastIndex(r.Price, "$")
			n, err := strconv.Atoi(strings.TrimSpace(r.Price[j+1:]))
			if j < 0 || err != nil {
				return 0, fmt.Errorf("unable to read the price %q", r.Price)
			}
			v = n
		default:
			var h, m int
			if _, err := fmt.Sscanf(strings.TrimSpace(r.Dur), "%dh %dm", &h, &m); err != nil {
				return 0, fmt.Errorf("unable to read the duration %q: %w", r.Dur, err)
			}
			v = h*60 + m
		}
		if strings.Contains(want, "expensive") || strings.Contains(want, "longest") {
			v = -v
		}
		if best < 0 || v < bestV {
			best, bestV = i, v
		}
	}
	if best < 0 {
		return 0, errors.New("no flights listed")
	}
	return best, nil
}

// formOrderFood orders the items named, one each, or n items of a kind
// (the kind read off the items' icons).
func formOrderFood(ctx context.Context, p *Play) error {
	instr := p.Obs.Instruction
	add := func(item string) error { return formClick(ctx, p, formIn(item, ".add")) }
	if names, ok := strings.CutPrefix(instr, "Order one of each item:"); ok {
		for _, n := range strings.Split(names, ",") {
			n = strings.TrimSpace(n)
			if err := add(fmt.Sprintf(`[...document.querySelectorAll('.food-item')].find(f => f.querySelector('.item-name').textContent.trim() === %q)`, n)); err != nil {
				return err
			}
		}
	} else {
		m := regexp.MustCompile(`^Order (\d+) items that are (\S+)`).FindStringSubmatch(instr)
		if m == nil {
			return fmt.Errorf("unable to read the order %q", instr)
		}
		n, _ := strconv.Atoi(m[1])
		item := fmt.Sprintf(`[...document.querySelectorAll('.food-item')].find(f => [...f.querySelectorAll('.types img')].some(i => i.alt === %q))`, m[2])
		for range n {
			if err := add(item); err != nil {
				return err
			}
		}
	}
	return formClick(ctx, p, `document.querySelector('#submit-order button')`)
}

// formSequence2 checks the radio button and fills the textbox the
// instruction counts.
func formSequence2(ctx context.Context, p *Play) error {
	m := regexp.MustCompile(`Check the (\d)\w\w radio button and enter the number "(-?\d+)" into the (\d)\w\w textbox`).FindStringSubmatch(p.Obs.Instruction)
	if m == nil {
		return fmt.Errorf("unable to read %q", p.Obs.Instruction)
	}
	return steps(func() error { return p.By(ctx, `#area input[type=radio][value="`+m[1]+`"]`, click) },
		func() error { return p.By(ctx, "#input-"+m[3], fill(m[2])) },
		func() error { return p.By(ctx, submit, click) })
}

// formTerminal lists the files with ls, then removes one with the
// extension asked. The terminal reads keys one at a time (keydown), so
// each character is a key press: the policy presses only Enter, and these
// presses are steps it cannot express.
func formTerminal(ctx context.Context, p *Play) error {
	instr := p.Obs.Instruction
	ext := ""
	if !strings.Contains(instr, "no file extension") {
		_, e, ok := strings.Cut(instr, "with the extension .")
		if !ok {
			return fmt.Errorf("unable to read the extension of %q", instr)
		}
		ext = strings.TrimSuffix(strings.TrimSpace(e), ".")
	}
	// A click on the terminal focuses its hidden input, which listens for
	// keys: the commands are typed as key presses (keyboard_type), and
	// each is a word the page shows: "help" in its welcome line, "ls"
	// and "rm" in help's usage lines, the file in ls's listing.
	term, err := p.Env.QueryBID(ctx, "#terminal", findWait)
	if err != nil {
		return err
	}
	if err := p.Do(ctx, env.Action{Type: env.Click, BID: term}); err != nil {
		return err
	}
	typeKeys := func(s string) error { return p.Do(ctx, env.Action{Type: env.KeyboardType, Text: s}) }
	press := func(key string) error { return p.Do(ctx, env.Action{Type: env.Press, BID: term, Key: key}) }
	for _, cmd := range []string{"help", "ls"} {
		if err := steps(func() error { return typeKeys(cmd) }, func() error { return press("Enter") }); err != nil {
			return err
		}
	}
	var out string
	if err := p.Read(ctx, `(() => { const o = document.querySelectorAll('#terminal-contents .terminal-output .output'); return o.length ? o[o.length - 1].textContent : ''; })()`, &out); err != nil {
		return err
	}
	file := ""
	for _, f := range strings.Fields(out) {
		if ext == "" && !strings.Contains(f, ".") || ext != "" && strings.HasSuffix(f, "."+ext) {
			file = f
			break
		}
	}
	if file == "" {
		return fmt.Errorf("no file with the extension %q in %q", ext, out)
	}
	return steps(func() error { return typeKeys("rm") }, func() error { return press("Space") },
		func() error { return typeKeys(file) }, func() error { return press("Enter") })
}

// formFlightTerm is what to type into a book-flight field for a place the
// instruction gives as a city ("Adak Island, AK") or an airport code
// ("ADK"): the code, or the city's longest unbroken run of words (what
// the policy can copy from the instruction), which the suggestions then
// complete.
func formFlightTerm(place string) string {
	city, _, ok := strings.Cut(place, ",")
	if !ok {
		return place
	}
	best := city
	if sp := instruction.Spans(city, 3); len(sp) > 0 {
		best = ""
		for _, s := range sp {
			if len(s) > len(best) {
				best = s
			}
		}
	}
	return strings.TrimSpace(best)
}

// formFlightPlace fills a book-flight field with a place and picks its
// suggestion ("Adak Island, AK (ADK)").
func formFlightPlace(ctx context.Context, p *Play, css, place string) error {
	match := fmt.Sprintf(`e.textContent.startsWith(%q)`, place+" (")
	if !strings.Contains(place, ",") {
		match = fmt.Sprintf(`e.textContent.endsWith(%q)`, "("+place+")")
	}
	item := `[...document.querySelectorAll('.ui-autocomplete .ui-menu-item-wrapper')].find(e => e.offsetParent !== null && ` + match + `)`
	return steps(func() error { return p.By(ctx, css, fill(formFlightTerm(place))) },
		func() error { return formWait(ctx, p, item, 5*time.Second) },
		func() error { return formPick(ctx, p, css, item) })
}

// formMonths are the datepicker's month names.
var formMonths = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

// formBookFlight searches the flights from the instruction's places on its
// date (picked on the datepicker, month by month), then books the
// cheapest or shortest.
func formBookFlight(ctx context.Context, p *Play) error {
	m := regexp.MustCompile(`^Book the (\w+) one-way flight from: (.+) to: (.+) on (\d\d)/(\d\d)/(\d{4})\.`).FindStringSubmatch(p.Obs.Instruction)
	if m == nil {
		return fmt.Errorf("unable to read the flight of %q", p.Obs.Instruction)
	}
	want, from, to := m[1], m[2], m[3]
	month, _ := strconv.Atoi(m[4])
	day, _ := strconv.Atoi(m[5])
	year, _ := strconv.Atoi(m[6])
	if err := steps(func() error { return formFlightPlace(ctx, p, "#flight-from", from) },
		func() error { return formFlightPlace(ctx, p, "#flight-to", to) },
		func() error { return p.By(ctx, "#datepicker", click) },
		func() error {
			return formWait(ctx, p, `document.querySelector('#ui-datepicker-div .ui-datepicker-month')`, 3*time.Second)
		}); err != nil {
		return err
	}
	for range 24 {
		var shown struct{ Month, Year string }
		if err := p.Read(ctx, `(() => { const d = document.querySelector('#ui-datepicker-div'); return {month: d.querySelector('.ui-datepicker-month').textContent, year: d.querySelector('.ui-datepicker-year').textContent}; })()`, &shown); err != nil {
			return err
		}
		y, _ := strconv.Atoi(strings.TrimSpace(shown.Year))
		mo := 0
		for i, n := range formMonths {
			if n == strings.TrimSpace(shown.Month) {
				mo = i + 1
			}
		}
		if mo == 0 {
			return fmt.Errorf("unable to read the month %q", shown.Month)
		}
		d := (year*12 + month) - (y*12 + mo)
		if d == 0 {
			break
		}
		nav := `document.querySelector('#ui-datepicker-div .ui-datepicker-next')`
		if d < 0 {
			nav = `document.querySelector('#ui-datepicker-div .ui-datepicker-prev')`
		}
		if err := formClick(ctx, p, nav); err != nil {
			return err
		}
	}
	if err := steps(func() error {
		return formClick(ctx, p, fmt.Sprintf(`[...document.querySelectorAll('#ui-datepicker-div td[data-handler="selectDay"] a')].find(a => a.textContent.trim() === %q)`, strconv.Itoa(day)))
	}, func() error { return p.By(ctx, "#search", click) }); err != nil {
		return err
	}
	i, err := formPickFlight(ctx, p, "#results .flight", ".flight-price", want)
	if err != nil {
		return err
	}
	return formClick(ctx, p, fmt.Sprintf(`document.querySelectorAll('#results .flight')[%d].querySelector('.flight-price')`, i))
}

// formSolveX solves simple-algebra's "x + 3 = 10", "4 - x = 1". The answer
// is computed: the policy does not compute, so its fill is a step it
// cannot express.
func formSolveX(prob string) (int, error) {
	f := strings.Fields(prob)
	if len(f) != 5 || f[3] != "=" {
		return 0, fmt.Errorf("unable to read the problem %q", prob)
	}
	r, err := strconv.Atoi(f[4])
	if err != nil {
		return 0, fmt.Errorf("unable to read the problem %q", prob)
	}
	switch {
	case f[0] == "x":
		d, err := strconv.Atoi(f[2])
		if err != nil {
			return 0, fmt.Errorf("unable to read the problem %q", prob)
		}
		if f[1] == "+" {
			return r - d, nil
		}
		return r + d, nil
	case f[2] == "x":
		d, err := strconv.Atoi(f[0])
		if err != nil {
			return 0, fmt.Errorf("unable to read the problem %q", prob)
		}
		if f[1] == "+" {
			return r - d, nil
		}
		return d - r, nil
	}
	return 0, fmt.Errorf("unable to read the problem %q", prob)
}

// formTextEditor selects the word asked (or everything) by dragging over
// it, then styles it from the toolbar (a button, or a colour of the
// colour picker) and submits.
func formTextEditor(ctx context.Context, p *Play) error {
	instr := p.Obs.Instruction
	word, style := "", ""
	if m := regexp.MustCompile(`give the text (.+) the (?:style|color) (\w+)`).FindStringSubmatch(instr); m != nil {
		word, style = m[1], m[2]
	} else if m := regexp.MustCompile(`everything the (?:style|color) (\w+)`).FindStringSubmatch(instr); m != nil {
		style = m[1]
	} else {
		return fmt.Errorf("unable to read %q", instr)
	}
	// From three quarters into the last glyph back to a quarter into the
	// first (highlight-text's drag), each end moved to where the policy's
	// point head acts that still puts the caret there.
	var span *struct{ X0, Y0, X1, Y1 float64 }
	w, _ := json.Marshal(word)
	if err := p.Read(ctx, `(() => {
		const root = document.querySelector('#editor .ql-editor');
		const tw = document.createTreeWalker(root, NodeFilter.SHOW_TEXT), nodes = [];
		for (let n; (n = tw.nextNode()); ) nodes.push(n);
		const text = nodes.map(n => n.data).join(''), word = `+string(w)+`;
		const at = i => {
			for (const n of nodes) {
				if (i < n.data.length) { const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1); return r.getBoundingClientRect(); }
				i -= n.data.length;
			}
			return null;
		};
		let i = 0, j = text.length - 1;
		if (word) {
			let pos = 0, found = -1;
			for (const tok of text.split(' ')) { if (tok === word) { found = pos; break; } pos += tok.length + 1; }
			if (found < 0) return null;
			i = found; j = found + word.length - 1;
		}
		while (i < j && /\s/.test(text[i])) i++;
		while (j > i && /\s/.test(text[j])) j--;
		// Each end a point of the policy's near the glyph's edge where the
		// browser puts the caret on the right side of it (not always the
		// glyph's middle: a full stop's ink is left of its box).
		const a = at(i), b = at(j);
		const caret = (x, y) => {
			const r = document.caretRangeFromPoint(x, y);
			if (!r || !root.contains(r.startContainer)) return -1;
			if (r.startContainer.nodeType !== 3) return r.startOffset === 0 ? 0 : text.length;
			let off = 0;
			for (const n of nodes) { if (n === r.startContainer) return off + r.startOffset; off += n.data.length; }
			return -1;
		};
		`+formSnapJS+`
		const pick = (lo, hi, y, want) => {
			const g = innerWidth / 64;
			let best = null, d = Infinity;
			for (let k = Math.floor(lo / g); k <= Math.ceil(hi / g); k++) {
				const c = (k + 0.5) * g;
				if (c >= lo && c <= hi && caret(c, y) === want && Math.abs(c - (lo + hi) / 2) < d) { best = c; d = Math.abs(c - (lo + hi) / 2); }
			}
			return best;
		};
		const y0 = snap(a.top, a.bottom, (a.top + a.bottom) / 2, innerHeight), y1 = snap(b.top, b.bottom, (b.top + b.bottom) / 2, innerHeight);
		const x0 = pick(a.left - 6, a.left + a.width / 2 + 3, y0, i), x1 = pick(b.right - b.width / 2 - 3, b.right + 6, y1, j + 1);
		if (x0 === null || x1 === null) return null;
		return {x0, y0, x1, y1};
	})()`, &span); err != nil {
		return err
	}
	if span == nil {
		return fmt.Errorf("no %q in the editor, or no point to select it from", word)
	}
	if err := p.Do(ctx, env.Action{Type: env.MouseDragAndDrop, X: span.X1, Y: span.Y1, ToX: span.X0, ToY: span.Y0}); err != nil {
		return err
	}
	var err error
	switch style {
	case "bold", "italics", "underlined":
		err = p.By(ctx, ".ql-toolbar .ql-"+map[string]string{"bold": "bold", "italics": "italic", "underlined": "underline"}[style], click)
	default:
		c, ok := formColors[style]
		if !ok {
			return fmt.Errorf("unknown style %q", style)
		}
		err = steps(func() error { return p.By(ctx, ".ql-toolbar .ql-color .ql-picker-label", click) },
			func() error { return p.By(ctx, `.ql-toolbar .ql-color .ql-picker-item[data-value="`+c+`"]`, click) })
	}
	if err != nil {
		return err
	}
	return p.By(ctx, submit, click)
}

// formColors is the colour picker's swatch of each colour text-editor
// names.
var formColors = map[string]string{
	"red": "#e60000", "orange": "#ff9900", "yellow": "#ffff00", "green": "#008a00", "blue": "#0066cc", "purple": "#9933ff",
}

// formEmailJob is what an email-inbox instruction asks: an action
// (delete, important, reply, forward) on the email by name, with the reply's
// text or the address to forward to.
type formEmailJob struct{ action, name, text string }

var (
	formEmailReply   = regexp.MustCompile(`^Find the email by (.+?) and reply to them with the text "(.*)"\.?$`)
	formEmailForward = regexp.MustCompile(`^Find the email by (.+?) and forward that email to (.+?)\.?$`)
	formEmailIcon    = regexp.MustCompile(`^Find the email by (.+?) and click the (trash|star) icon`)
)

// formEmail solves the email-inbox tasks: a row's trash or star icon, or
// the email opened and replied to or forwarded. kind is the action when
// the task has one only.
func formEmail(kind string) MiniWoBSolver {
	return func(ctx context.Context, p *Play) error {
		var senders []string
		if err := p.Read(ctx, `[...document.querySelectorAll('#main .email-thread .email-sender')].map(e => e.textContent)`, &senders); err != nil {
			return err
		}
		job, err := formEmailTask(p.Obs.Instruction, senders, kind)
		if err != nil {
			return err
		}
		thread := fmt.Sprintf(`[...document.querySelectorAll('#main .email-thread')].find(t => t.querySelector('.email-sender').textContent === %q)`, job.name)
		switch job.action {
		case "delete":
			return formClick(ctx, p, formIn(thread, ".email-actions .trash"))
		case "important":
			return formClick(ctx, p, formIn(thread, ".email-actions .star"))
		case "reply":
			return steps(func() error { return formClick(ctx, p, thread) },
				func() error { return p.By(ctx, "#email .email-reply", click) },
				func() error { return p.By(ctx, "#reply-text", fill(job.text)) },
				func() error { return p.By(ctx, "#send-reply", click) })
		}
		return steps(func() error { return formClick(ctx, p, thread) },
			func() error { return p.By(ctx, "#email .email-forward", click) },
			func() error { return p.By(ctx, "#forward .forward-sender", fill(job.text)) },
			func() error { return p.By(ctx, "#send-forward", click) })
	}
}

// formEmailTask reads an email-inbox instruction: the benchmark's own
// sentences first, else a free one (the -nl tasks'), where the names are
// the inbox's senders it mentions.
func formEmailTask(instr string, senders []string, kind string) (formEmailJob, error) {
	instr = strings.TrimSpace(instr)
	if m := formEmailReply.FindStringSubmatch(instr); m != nil {
		return formEmailJob{"reply", m[1], m[2]}, nil
	}
	if m := formEmailForward.FindStringSubmatch(instr); m != nil {
		return formEmailJob{"forward", m[1], m[2]}, nil
	}
	if m := formEmailIcon.FindStringSubmatch(instr); m != nil {
		return formEmailJob{map[string]string{"trash": "delete", "star": "important"}[m[2]], m[1], ""}, nil
	}
	// A reply's text is quoted; names are looked for outside it.
	msg, plain := "", instr
	if i, j := strings.Index(instr, `"`), strings.LastIndex(instr, `"`); i >= 0 && j > i {
		if q := instruction.QuotedPhrases(instr); len(q) > 0 {
			msg = q[0]
		} else {
			msg = strings.Trim(instr[i:j+1], `" `)
		}
		plain = instr[:i] + " ; " + instr[j+1:]
	}
	type hit struct {
		name    string
		at, end int
	}
	var hits []hit
	seen := map[string]bool{}
	for _, s := range senders {
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		// "Ann's", "Anns" (a typo the sentences have) name Ann, and so
		// does "AnswerAnn's" (another).
		for _, lead := range []string{`\b`, ``} {
			if loc := regexp.MustCompile(lead + regexp.QuoteMeta(s) + `(?:'s|s)?\b`).FindStringIndex(plain); loc != nil {
				hits = append(hits, hit{s, loc[0], loc[1]})
				break
			}
		}
	}
	// A name inside a longer one mentioned ("Ann" in "Ann-Marie") is not
	// mentioned; the rest in the order they are.
	var named []hit
	for _, h := range hits {
		inner := false
		for _, g := range hits {
			if len(g.name) > len(h.name) && g.at <= h.at && h.end <= g.end {
				inner = true
			}
		}
		if !inner {
			named = append(named, h)
		}
	}
	for i := 1; i < len(named); i++ {
		for j := i; j > 0 && named[j].at < named[j-1].at; j-- {
			named[j], named[j-1] = named[j-1], named[j]
		}
	}
	if len(named) == 0 {
		return formEmailJob{}, fmt.Errorf("the instruction %q names none of the senders %q", instr, senders)
	}
	low := strings.ToLower(plain)
	has := func(ws ...string) bool {
		for _, w := range ws {
			if strings.Contains(low, w) {
				return true
			}
		}
		return false
	}
	action := kind
	switch {
	case action != "":
	case msg != "":
		action = "reply"
	case len(named) >= 2:
		action = "forward"
	case has("delete", "remove", "rid of", "trash", "don't want", "throw", "out of my inbox", "recycl", "discard", "erase"):
		action = "delete"
	case has("import", "imporant", "imiportant", "star", "flag", "mark"):
		action = "important"
	case has("forward", "foward", "send", "give"):
		action = "forward"
	default:
		action = "important"
	}
	switch action {
	case "reply":
		return formEmailJob{action, named[0].name, msg}, nil
	case "forward":
		if len(named) == 1 {
			return formEmailJob{action, named[0].name, named[0].name}, nil
		}
		// The email's author is the name said to send or own it ("from
		// A", "by A", "A's", "A sent"); the other is who gets it ("to
		// B"); else the first named.
		score := func(h hit) int {
			before, after := strings.ToLower(plain[:h.at]), strings.ToLower(plain[h.end:])
			s := 0
			if strings.HasSuffix(before, "from ") || strings.HasSuffix(before, "by ") {
				s++
			}
			if h.end-h.at > len(h.name) {
				s++
			}
			if strings.HasPrefix(after, " sent") || strings.HasPrefix(after, " wrote") || strings.HasPrefix(after, " wants his") {
				s++
			}
			if strings.HasSuffix(before, "to ") {
				s--
			}
			return s
		}
		a, b := named[0], named[1]
		if score(b) > score(a) {
			a, b = b, a
		}
		return formEmailJob{action, a.name, b.name}, nil
	}
	return formEmailJob{action, named[0].name, ""}, nil
}
