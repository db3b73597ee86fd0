package oracle

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// widgetSolvers: tasks of widgets and games: menus, date pickers, shapes, counts, sequences.
//
// No solver: click-pie(-nodelay), whose items listen for mouseup but move
// themselves to the front on every mouseover, so that Chromium sends every
// press and release to the SVG behind them; tic-tac-toe, whose opponent
// plays at random and can block, so that no play wins every game (the
// best, by expectimax against its code, wins about 85%).
var widgetSolvers = map[string]MiniWoBSolver{
	"click-color": func(ctx context.Context, p *Play) error {
		c, err := p.Between("Click on the ", " colored box.")
		if err != nil {
			return err
		}
		// The box painted in the colour (its style is what is seen).
		return widgetTap(ctx, p, fmt.Sprintf(`[...document.querySelectorAll('#area .color')].find(e => e.style.backgroundColor === %q)`, c))
	},
	"click-shape": func(ctx context.Context, p *Play) error {
		d := strings.TrimPrefix(p.Obs.Instruction, "Click on a ")
		items, err := widgetShapes(ctx, p)
		if err != nil {
			return err
		}
		want := widgetShapeDesc(d)
		for i, s := range items {
			if want.matches(s) {
				return widgetTap(ctx, p, fmt.Sprintf(`document.querySelectorAll('#area_svg > *')[%d]`, i))
			}
		}
		return fmt.Errorf("no shape is a %q", d)
	},
	"count-shape": func(ctx context.Context, p *Play) error {
		d, err := p.Between("How many ", "s are there?")
		if err != nil {
			return err
		}
		items, err := widgetShapes(ctx, p)
		if err != nil {
			return err
		}
		want, n := widgetShapeDesc(d), 0
		for _, s := range items {
			if want.matches(s) {
				n++
			}
		}
		return p.On(ctx, "button", strconv.Itoa(n), click)
	},
	"count-sides": func(ctx context.Context, p *Play) error {
		// The sides are counted off the drawing: the outline's outer
		// edge, seen from its centroid along 360 rays (where the ink's
		// interpolated alpha last reaches half), is far at the corners and
		// near between them; the corners are the runs above the middle of
		// that range (with some hysteresis against the antialiasing).
		var n int
		if err := p.Read(ctx, `(() => {
			const c = document.getElementById('c'), w = c.width, h = c.height;
			const d = c.getContext('2d').getImageData(0, 0, w, h).data;
			const al = (x, y) => x >= 0 && y >= 0 && x < w && y < h ? d[(y * w + x) * 4 + 3] : 0;
			let sx = 0, sy = 0, k = 0;
			for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) if (al(x, y) > 100) { sx += x; sy += y; k++; }
			if (!k) return 0;
			const cx = sx / k, cy = sy / k, N = 360;
			const A = (x, y) => { const x0 = Math.floor(x), y0 = Math.floor(y), fx = x - x0, fy = y - y0;
				return al(x0, y0) * (1 - fx) * (1 - fy) + al(x0 + 1, y0) * fx * (1 - fy) + al(x0, y0 + 1) * (1 - fx) * fy + al(x0 + 1, y0 + 1) * fx * fy; };
			const prof = [];
			for (let i = 0; i < N; i++) {
				const a = 2 * Math.PI * i / N;
				let r = 0;
				for (let s = 160; s > 0; s--) if (A(cx + s / 4 * Math.cos(a), cy + s / 4 * Math.sin(a)) >= 128) { r = s / 4; break; }
				prof.push(r);
			}
			const hi = Math.max(...prof), lo = Math.min(...prof), mid = (hi + lo) / 2, hy = Math.max(0.3, (hi - lo) * 0.15);
			const st = prof.indexOf(lo);
			let runs = 0, up = false;
			for (let j = 0; j < N; j++) {
				const v = prof[(st + j) % N];
				if (!up && v > mid + hy) { up = true; runs++; } else if (up && v < mid - hy) up = false;
			}
			return runs;
		})()`, &n); err != nil {
			return err
		}
		if n < 3 || n > 7 {
			return fmt.Errorf("counted %d sides", n)
		}
		return p.On(ctx, "button", strconv.Itoa(n), click)
	},
	"click-menu": func(ctx context.Context, p *Play) error {
		names := strings.Split(strings.TrimPrefix(p.Obs.Instruction, "Select "), ">")
		item := func(n string) string {
			return fmt.Sprintf(`[...document.querySelectorAll('#menu li > div')].find(d => d.textContent === %q)`, n)
		}
		// The way down: each menu's item pointed at until its submenu
		// (opened after jQuery UI's 300 ms) is shown; then the leaf clicked.
		for _, n := range names[:len(names)-1] {
			if err := p.ByJS(ctx, item(n), env.Action{Type: env.Hover}); err != nil {
				return err
			}
			if err := widgetUntil(ctx, p, `(() => { const d = `+item(n)+`; const u = d && d.parentElement.querySelector(':scope > ul');
				return !!u && getComputedStyle(u).display !== 'none' && u.getBoundingClientRect().width > 0; })()`, 3*time.Second); err != nil {
				return fmt.Errorf("the submenu of %s: %w", n, err)
			}
			if err := widgetLook(ctx, p); err != nil {
				return err
			}
		}
		return widgetTap(ctx, p, item(names[len(names)-1]))
	},
	"click-menu-2": func(ctx context.Context, p *Play) error {
		// The item is named, or shown by its icon: the icon the
		// instruction draws is the one beside the item.
		var want struct{ Label, Icon string }
		if q := p.Quoted(); len(q) >= 2 {
			want.Label = q[1]
		} else if err := p.Read(ctx, `(() => { const s = document.querySelector('#query .ui-icon'); return {icon: s ? [...s.classList].find(c => c !== 'ui-icon') || '' : ''}; })()`, &want); err != nil {
			return err
		}
		item := fmt.Sprintf(`[...document.querySelectorAll('#menu li')].find(l => !l.querySelector('ul') && (%q ? l.textContent.trim() === %q : !!l.querySelector(':scope > div > .ui-icon.' + %q)))`, want.Label, want.Label, want.Icon)
		if want.Label == "" && want.Icon == "" {
			return fmt.Errorf("the instruction %q names no item", p.Obs.Instruction)
		}
		if err := p.By(ctx, "#open-menu", click); err != nil {
			return err
		}
		// An item of the Playback submenu: Playback pointed at first.
		var nested bool
		if err := p.Read(ctx, `(() => { const l = `+item+`; return !!l && !!l.parentElement.closest('li'); })()`, &nested); err != nil {
			return err
		}
		if nested {
			parent := `(` + item + `).parentElement.closest('li').querySelector(':scope > div')`
			if err := p.ByJS(ctx, parent, env.Action{Type: env.Hover}); err != nil {
				return err
			}
			if err := widgetUntil(ctx, p, `(() => { const l = `+item+`; return !!l && l.getBoundingClientRect().width > 0 && getComputedStyle(l.parentElement).display !== 'none'; })()`, 3*time.Second); err != nil {
				return fmt.Errorf("the Playback submenu: %w", err)
			}
			if err := widgetLook(ctx, p); err != nil {
				return err
			}
		}
		return widgetTap(ctx, p, `(`+item+`).querySelector(':scope > div')`)
	},
	"click-scroll-list": func(ctx context.Context, p *Play) error {
		names, err := p.Between("Select ", " from the scroll list and click Submit.")
		if err != nil {
			return err
		}
		// The options the list names (a country's name may hold a comma),
		// added one a step, as the policy's select adds one to a
		// listbox's selection (select_option of the selection so far).
		var opts []string
		if err := p.Read(ctx, fmt.Sprintf(`[...document.querySelectorAll('#options option')].map(o => o.textContent).filter(t => (', ' + %q + ', ').includes(', ' + t + ', '))`, names), &opts); err != nil {
			return err
		}
		if len(opts) == 0 {
			return fmt.Errorf("no option of the list is in %q", names)
		}
		for i := range opts {
			if err := p.By(ctx, "#options", env.Action{Type: env.SelectOption, Options: opts[:i+1]}); err != nil {
				return err
			}
		}
		return p.On(ctx, "button", "Submit", click)
	},
	"click-shades": func(ctx context.Context, p *Play) error {
		c, err := p.Between("Select all the shades of ", " and press Submit.")
		if err != nil {
			return err
		}
		// A shade's hue is its largest channel: red, green or blue.
		var hues []string
		if err := p.Read(ctx, `[...document.querySelectorAll('#area span')].map(s => {
			const m = getComputedStyle(s).backgroundColor.match(/\d+/g).map(Number);
			return ['red', 'green', 'blue'][m.slice(0, 3).indexOf(Math.max(...m.slice(0, 3)))];
		})`, &hues); err != nil {
			return err
		}
		for i, h := range hues {
			if h == c {
				if err := widgetTap(ctx, p, fmt.Sprintf(`document.querySelectorAll('#area span')[%d]`, i)); err != nil {
					return err
				}
			}
		}
		return p.By(ctx, "#submit", click)
	},
	"navigate-tree": func(ctx context.Context, p *Play) error {
		name, err := p.Quote(0)
		if err != nil {
			return err
		}
		// The first item so named: its closed folders opened from the
		// top (a folder opens by its name), then the item clicked: a
		// folder by its name, a file by its row.
		target := fmt.Sprintf(`[...document.querySelectorAll('#tree span')].find(s => s.textContent === %q)`, name)
		var closed int
		if err := p.Read(ctx, `(() => { const s = `+target+`; if (!s) return -1; let n = 0;
			for (let l = s.parentElement.parentElement.closest('li'); l; l = l.parentElement.closest('li')) if (getComputedStyle(l.querySelector(':scope > ul')).display === 'none') n++;
			return n; })()`, &closed); err != nil {
			return err
		}
		if closed < 0 {
			return fmt.Errorf("no item %q in the tree", name)
		}
		for range closed {
			// The outermost closed folder above the item.
			opener := `(() => { const s = ` + target + `; let o = null;
				for (let l = s.parentElement.parentElement.closest('li'); l; l = l.parentElement.closest('li')) if (getComputedStyle(l.querySelector(':scope > ul')).display === 'none') o = l;
				return o && o.querySelector(':scope > span'); })()`
			if err := widgetTap(ctx, p, opener); err != nil {
				return err
			}
		}
		return widgetTap(ctx, p, `(() => { const s = `+target+`; return s.classList.contains('folder') ? s : s.parentElement; })()`)
	},
	"choose-date-easy":    widgetDate,
	"choose-date-medium":  widgetDate,
	"choose-date":         widgetDate,
	"choose-date-nodelay": widgetDate,
	"use-spinner": func(ctx context.Context, p *Play) error {
		s, err := p.Between("Select ", " with the spinner")
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("unable to read the number %q", s)
		}
		// One press of an arrow a step; the field takes no typing.
		for range 25 {
			var v string
			if err := p.Read(ctx, `document.getElementById('spinner').value`, &v); err != nil {
				return err
			}
			cur, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("the spinner shows %q", v)
			}
			if cur == n {
				return p.By(ctx, submit, click)
			}
			arrow := "#area .ui-spinner-up"
			if cur > n {
				arrow = "#area .ui-spinner-down"
			}
			if err := widgetTap(ctx, p, `document.querySelector('`+arrow+`')`); err != nil {
				return err
			}
		}
		return fmt.Errorf("the spinner did not reach %d", n)
	},
	"form-sequence": func(ctx context.Context, p *Play) error {
		var n int
		var pos string
		if _, err := fmt.Sscanf(p.Obs.Instruction, "Select %d with the slider, click the %s checkbox", &n, &pos); err != nil {
			return fmt.Errorf("unable to read %q: %w", p.Obs.Instruction, err)
		}
		i := strings.Index("1st2nd3rd", pos)
		if i < 0 || len(pos) != 3 {
			return fmt.Errorf("unknown position %q", pos)
		}
		return steps(func() error { return widgetSlide(ctx, p, "#slider", "#val", -10, 10, n) },
			func() error { return p.By(ctx, fmt.Sprintf("#checkbox-%d", i/3+1), click) },
			func() error { return p.By(ctx, submit, click) })
	},
	"ascending-numbers": func(ctx context.Context, p *Play) error {
		// Where each number is, seen before "1" hides them all under
		// squares; the squares are the numbers' places (shifted alike).
		var at []struct{ N, X, Y float64 }
		if err := p.Read(ctx, `[...document.querySelectorAll('#area_svg text')].map(t => { const r = t.getBoundingClientRect(); return {n: +t.textContent, x: r.left + r.width / 2, y: r.top + r.height / 2}; })`, &at); err != nil {
			return err
		}
		slices.SortFunc(at, func(a, b struct{ N, X, Y float64 }) int { return int(a.N - b.N) })
		if len(at) < 2 || at[0].N != 1 {
			return fmt.Errorf("no numbers from 1 on the page: %v", at)
		}
		if err := widgetTap(ctx, p, `[...document.querySelectorAll('#area_svg text')].find(t => t.textContent === '1')`); err != nil {
			return err
		}
		var sq []struct{ X, Y float64 }
		if err := p.Read(ctx, `[...document.querySelectorAll('#area_svg rect')].map(r => { const b = r.getBoundingClientRect(); return {x: b.left + b.width / 2, y: b.top + b.height / 2}; })`, &sq); err != nil {
			return err
		}
		rest := at[1:]
		if len(sq) != len(rest) {
			return fmt.Errorf("%d squares for %d numbers", len(sq), len(rest))
		}
		var dx, dy float64
		for i := range sq {
			dx += (sq[i].X - rest[i].X) / float64(len(sq))
			dy += (sq[i].Y - rest[i].Y) / float64(len(sq))
		}
		for _, a := range rest {
			if err := widgetTap(ctx, p, fmt.Sprintf(`[...document.querySelectorAll('#area_svg rect')].map(r => { const b = r.getBoundingClientRect(); return [r, Math.hypot(b.left + b.width / 2 - %g, b.top + b.height / 2 - %g)]; }).sort((a, b) => a[1] - b[1])[0][0]`, a.X+dx, a.Y+dy)); err != nil {
				return err
			}
		}
		return nil
	},
	"button-delay": func(ctx context.Context, p *Play) error {
		s, err := p.Between("wait ", " seconds")
		if err != nil {
			return err
		}
		sec, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("unable to read the wait %q", s)
		}
		one, two := p.ByID("subbtn"), p.ByID("subbtn2")
		if one == nil || two == nil {
			return fmt.Errorf("no buttons ONE and TWO on the page")
		}
		// Both presses are the same kind of step, so that the time
		// between their starts is the time between the clicks.
		t0 := time.Now()
		if err := p.Do(ctx, env.Action{Type: env.Click, BID: one.BID}); err != nil {
			return err
		}
		if err := widgetWait(ctx, time.Until(t0.Add(time.Duration(sec)*time.Second))); err != nil {
			return err
		}
		return p.Do(ctx, env.Action{Type: env.Click, BID: two.BID})
	},
	"find-greatest": func(ctx context.Context, p *Play) error {
		// Every card turned over once, its number read; the greatest
		// turned over again unless it is the last, then submit.
		best, bestN := -1, math.MinInt
		for i := range 3 {
			card := fmt.Sprintf(`document.querySelectorAll('#cardholder .card')[%d]`, i)
			if err := widgetTap(ctx, p, card); err != nil {
				return err
			}
			var v string
			if err := p.Read(ctx, `(() => { const c = document.querySelector('#cardholder .card:not(.hidden)'); return c ? c.textContent.trim() : ''; })()`, &v); err != nil {
				return err
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("card %d shows %q", i, v)
			}
			if n > bestN {
				best, bestN = i, n
			}
		}
		if best != 2 {
			if err := widgetTap(ctx, p, fmt.Sprintf(`document.querySelectorAll('#cardholder .card')[%d]`, best)); err != nil {
				return err
			}
		}
		return p.By(ctx, "#submit", click)
	},
	"generate-number": func(ctx context.Context, p *Play) error {
		in := p.Obs.Instruction
		ok := func(n int) bool { return false }
		var k int
		switch {
		case strings.Contains(in, "less than"):
			if _, err := fmt.Sscanf(in[strings.Index(in, "less than"):], "less than %d", &k); err != nil {
				return err
			}
			ok = func(n int) bool { return n < k }
		case strings.Contains(in, "greater than"):
			if _, err := fmt.Sscanf(in[strings.Index(in, "greater than"):], "greater than %d", &k); err != nil {
				return err
			}
			ok = func(n int) bool { return n > k }
		case strings.Contains(in, "odd number"):
			ok = func(n int) bool { return n%2 != 0 }
		case strings.Contains(in, "even number"):
			ok = func(n int) bool { return n%2 == 0 }
		default:
			return fmt.Errorf("unknown request %q", in)
		}
		for range 40 {
			if err := p.By(ctx, "#generate", click); err != nil {
				return err
			}
			var v string
			if err := p.Read(ctx, `document.getElementById('display-number').textContent.trim()`, &v); err != nil {
				return err
			}
			if n, err := strconv.Atoi(v); err == nil && ok(n) {
				return p.By(ctx, "#submit", click)
			}
		}
		return fmt.Errorf("no number generated was right")
	},
	"guess-number": func(ctx context.Context, p *Play) error {
		// Halving 0-9 by the feedback: lower or higher than the guess.
		lo, hi := 0, 9
		for lo <= hi {
			g := (lo + hi) / 2
			if err := steps(func() error { return p.By(ctx, "#tt", fill(strconv.Itoa(g))) }, func() error { return p.By(ctx, submit, click) }); err != nil {
				return err
			}
			if p.Last.Done {
				return nil
			}
			var fb string
			if err := p.Read(ctx, `(() => { const d = [...document.querySelectorAll('#feedback div')].find(d => getComputedStyle(d).display !== 'none'); return d ? d.id : ''; })()`, &fb); err != nil {
				return err
			}
			switch fb {
			case "lower":
				hi = g - 1
			case "higher":
				lo = g + 1
			default:
				return fmt.Errorf("feedback %q after %d", fb, g)
			}
		}
		return fmt.Errorf("no number left to guess")
	},
	"odd-or-even": func(ctx context.Context, p *Play) error {
		var nums []string
		if err := p.Read(ctx, `[...document.querySelectorAll('#numbers .row .display-number')].map(d => d.textContent.trim())`, &nums); err != nil {
			return err
		}
		for i, s := range nums {
			n, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("row %d shows %q", i, s)
			}
			b := "even"
			if n%2 != 0 {
				b = "odd"
			}
			if err := widgetTap(ctx, p, fmt.Sprintf(`document.querySelectorAll('#numbers .row')[%d].querySelector('button.%s')`, i, b)); err != nil {
				return err
			}
		}
		return p.By(ctx, "#submit", click)
	},
	"number-checkboxes": func(ctx context.Context, p *Play) error {
		q, err := p.Quote(0)
		if err != nil {
			return err
		}
		d, err := strconv.Atoi(q)
		if err != nil || d < 0 || d > 9 {
			return fmt.Errorf("unknown digit %q", q)
		}
		// The digit as the example on the right draws it: 7 rows of 4.
		for i, row := range widgetDigits[d] {
			for j, c := range row {
				if c == '#' {
					if err := widgetTap(ctx, p, fmt.Sprintf(`document.querySelectorAll('#checkboxes input')[%d]`, i*4+j)); err != nil {
						return err
					}
				}
			}
		}
		return p.By(ctx, submit, click)
	},
	"simon-says": func(ctx context.Context, p *Play) error {
		// The buttons lit one after another (600 ms apart, 250 ms each)
		// are watched until none has lit for a second, then pressed in
		// that order.
		var seq []int
		last, lastLit := -1, time.Now()
		deadline := time.Now().Add(8 * time.Second)
		for time.Now().Before(deadline) {
			var lit int
			if err := p.Read(ctx, `[...document.querySelectorAll('#area button')].findIndex(b => b.classList.contains('push'))`, &lit); err != nil {
				return err
			}
			if lit >= 0 {
				if lit != last {
					seq = append(seq, lit)
				}
				lastLit = time.Now()
			} else if len(seq) >= 3 && time.Since(lastLit) > time.Second {
				break
			}
			last = lit
			if err := widgetWait(ctx, 15*time.Millisecond); err != nil {
				return err
			}
		}
		if len(seq) < 3 {
			return fmt.Errorf("saw %d buttons light", len(seq))
		}
		for _, b := range seq {
			if err := widgetTap(ctx, p, fmt.Sprintf(`document.querySelectorAll('#area button')[%d]`, b)); err != nil {
				return err
			}
		}
		return nil
	},
	"highlight-text-2": func(ctx context.Context, p *Play) error {
		pos, err := p.Between("Highlight the text in the ", " paragraph")
		if err != nil {
			return err
		}
		i := strings.Index("1st2nd3rd", pos)
		if i < 0 || len(pos) != 3 {
			return fmt.Errorf("unknown position %q", pos)
		}
		// From just right of the paragraph's last glyph back to just
		// left of its first (the margin beside the line): the caret
		// lands at the ends of the lines, whatever the glyphs' widths.
		var span struct{ X0, Y0, X1, Y1 float64 }
		if err := p.Read(ctx, fmt.Sprintf(`(() => {
			const n = document.querySelectorAll('#randomText p')[%d].firstChild, s = n.textContent;
			const at = i => { const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1); return r.getBoundingClientRect(); };
			let i = 0, j = s.length - 1;
			while (i < j && /\s/.test(s[i])) i++;
			while (j > i && /\s/.test(s[j])) j--;
			const a = at(i), b = at(j);
			return {x0: a.left, y0: a.top + a.height / 2, x1: b.right, y1: b.top + b.height / 2};
		})()`, i/3), &span); err != nil {
			return err
		}
		cw, _ := widgetCell(p)
		// The grid's columns nearest outside the glyphs, at least 1.5 px off.
		x1, y1 := widgetSnap(p, span.X1+1.5+cw/2, span.Y1)
		x0, y0 := widgetSnap(p, span.X0-1.5-cw/2, span.Y0)
		return steps(func() error {
			return p.Do(ctx, env.Action{Type: env.MouseDragAndDrop, X: x1, Y: y1, ToX: x0, ToY: y0})
		}, func() error { return p.By(ctx, submit, click) })
	},
	"click-checkboxes-soft": func(ctx context.Context, p *Play) error {
		names, err := p.Between("Select words similar to ", " and click Submit.")
		if err != nil {
			return err
		}
		if names != "nothing" {
			var labels []string
			if err := p.Read(ctx, `[...document.querySelectorAll('#boxes label')].map(l => l.textContent.trim())`, &labels); err != nil {
				return err
			}
			for _, n := range strings.Split(names, ", ") {
				i := slices.IndexFunc(labels, func(l string) bool { return widgetSynonyms(n, l) })
				if i < 0 {
					return fmt.Errorf("no word like %q among %v", n, labels)
				}
				if err := widgetTap(ctx, p, fmt.Sprintf(`document.querySelectorAll('#boxes label')[%d].querySelector('input')`, i)); err != nil {
					return err
				}
			}
		}
		return p.By(ctx, submit, click)
	},
	"visual-addition": func(ctx context.Context, p *Play) error {
		// The blocks of both groups counted (the total is computed).
		var n int
		if err := p.Read(ctx, `document.querySelectorAll('#visual-1 .addition-block, #visual-2 .addition-block').length`, &n); err != nil {
			return err
		}
		return steps(func() error { return p.By(ctx, "#math-answer", fill(strconv.Itoa(n))) }, func() error { return p.By(ctx, submit, click) })
	},
	"text-transform": func(ctx context.Context, p *Play) error {
		// The skewed letters read in order, as the page's line of them.
		var s string
		if err := p.Read(ctx, `[...document.querySelectorAll('#captcha span')].map(s => s.textContent).join('')`, &s); err != nil {
			return err
		}
		if s == "" {
			return fmt.Errorf("no text to copy")
		}
		return steps(func() error { return p.By(ctx, "#tt", fill(s)) }, func() error { return p.By(ctx, submit, click) })
	},
}

// widgetCell is the size in CSS pixels of a position of the policy's point
// head: a 64x64 grid over the wire frame, which keeps the viewport's
// aspect with 128 pixels on its longer side (frame.Fit).
func widgetCell(p *Play) (cw, ch float64) {
	w, h := p.Obs.Viewport.W, p.Obs.Viewport.H
	if w <= 0 || h <= 0 {
		return 1, 1
	}
	long := max(w, h)
	fw, fh := (w*128+long/2)/long, (h*128+long/2)/long
	scale := float64(fh) / float64(h)
	return float64(fw) / 64 / scale, float64(fh) / 64 / scale
}

// widgetSnap moves a point to the centre of the head's position that holds
// it, where the policy would press: a solver's points land where the
// audit's replay lands them.
func widgetSnap(p *Play, x, y float64) (float64, float64) {
	cw, ch := widgetCell(p)
	return (math.Floor(x/cw) + 0.5) * cw, (math.Floor(y/ch) + 0.5) * ch
}

// widgetKept reports whether the element bid is among the elements the
// policy keeps of the newest observation (the first 32: those in the
// viewport first, each group in document order): only those can it click.
func widgetKept(p *Play, bid string) bool {
	const maxElements = 32
	w, h := p.Obs.Viewport.W, p.Obs.Viewport.H
	n := 0
	for pass := range 2 {
		for _, el := range p.Obs.Elements {
			b := el.Box
			in := b.X < w && b.Y < h && b.X+b.W > 0 && b.Y+b.H > 0
			if in != (pass == 0) {
				continue
			}
			if n == maxElements {
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

// widgetTap clicks the element a JavaScript expression finds: as an
// element when the policy keeps it, else at its centre (a date picker's
// days, a file's name, past the kept elements or not listed).
func widgetTap(ctx context.Context, p *Play, js string) error {
	var t struct {
		OK   bool
		Bid  string
		X, Y float64
	}
	if err := p.Read(ctx, `(() => { const el = (`+js+`); if (!el) return {ok: false};
		const r = el.getClientRects()[0] || el.getBoundingClientRect();
		return {ok: true, bid: el.getAttribute('bid') || '', x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`, &t); err != nil {
		return err
	}
	if !t.OK {
		return fmt.Errorf("no element is %s", js)
	}
	if t.Bid != "" && widgetKept(p, t.Bid) {
		return p.Do(ctx, env.Action{Type: env.Click, BID: t.Bid})
	}
	x, y := widgetSnap(p, t.X, t.Y)
	return p.Do(ctx, env.Action{Type: env.MouseClick, X: x, Y: y})
}

// widgetUntil polls a JavaScript condition until it holds (an animation's
// end, a delayed submenu), for at most d.
func widgetUntil(ctx context.Context, p *Play, js string, d time.Duration) error {
	end := time.Now().Add(d)
	for {
		var ok bool
		if err := p.Read(ctx, js, &ok); err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("still not %s after %s", js, d)
		}
		if err := widgetWait(ctx, 30*time.Millisecond); err != nil {
			return err
		}
	}
}

// widgetLook observes the page again without acting (a no-op step): what
// appeared after the last step's observation (a submenu opened by a
// delayed hover, a spread pie) is then among the elements.
func widgetLook(ctx context.Context, p *Play) error {
	return p.Do(ctx, env.Action{Type: env.Noop})
}

// widgetWait lets d pass (the page goes on: a person watching it).
func widgetWait(ctx context.Context, d time.Duration) error { return backoff.Sleep(ctx, max(d, 0)) }

// widgetShape is one figure of the shapes grid as it is seen: a letter or
// digit and which, or a shape and which; its colour and size.
type widgetShape struct {
	Type, Text, Color string
	Large             bool
}

// widgetShapes reads the figures of #area_svg in document order.
func widgetShapes(ctx context.Context, p *Play) ([]widgetShape, error) {
	var out []widgetShape
	err := p.Read(ctx, `[...document.querySelectorAll('#area_svg > *')].map(e => {
		const t = e.tagName.toLowerCase();
		if (t === 'text') { const g = e.textContent; return {type: /^[0-9]$/.test(g) ? 'digit' : 'letter', text: g, color: e.getAttribute('fill'), large: parseFloat(e.getAttribute('font-size')) > 15}; }
		return {type: 'shape', text: {rect: 'rectangle', circle: 'circle', polygon: 'triangle'}[t] || t, color: e.getAttribute('fill'), large: e.getBBox().width > 15};
	})`, &out)
	return out, err
}

// widgetShapeQuery is a description of shapes: "large red circle", "small
// letter", "blue item"; empty parts match anything.
type widgetShapeQuery struct{ size, color, what string }

func widgetShapeDesc(d string) widgetShapeQuery {
	var q widgetShapeQuery
	for _, w := range strings.Fields(strings.TrimSuffix(d, ".")) {
		switch {
		case w == "large" || w == "small":
			q.size = w
		case slices.Contains([]string{"red", "green", "blue", "aqua", "black", "magenta", "yellow"}, w):
			q.color = w
		default:
			q.what = w
		}
	}
	return q
}

func (q widgetShapeQuery) matches(s widgetShape) bool {
	size := map[bool]string{true: "large", false: "small"}[s.Large]
	return (q.size == "" || q.size == size) && (q.color == "" || q.color == s.Color) &&
		(q.what == "" || q.what == "item" || q.what == s.Text || q.what == s.Type)
}

// widgetDate picks the instruction's date (mm/dd/yyyy) in the jQuery UI
// date picker: opened by its field, the month turned to by Prev and Next,
// the day clicked, then submit once the picker has closed.
func widgetDate(ctx context.Context, p *Play) error {
	d, err := p.Between("Select ", " as the date")
	if err != nil {
		return err
	}
	t, err := time.Parse("01/02/2006", d)
	if err != nil {
		return fmt.Errorf("unable to read the date %q: %w", d, err)
	}
	if err := p.By(ctx, "#datepicker", click); err != nil {
		return err
	}
	shown := `(() => { const d = document.getElementById('ui-datepicker-div'); return !!d && getComputedStyle(d).display !== 'none' && Number(getComputedStyle(d).opacity) === 1; })()`
	if err := widgetUntil(ctx, p, shown, 3*time.Second); err != nil {
		return err
	}
	if err := widgetLook(ctx, p); err != nil {
		return err
	}
	want := t.Year()*12 + int(t.Month()) - 1
	for range 30 {
		var m struct {
			Month string
			Year  int
		}
		if err := p.Read(ctx, `({month: document.querySelector('#ui-datepicker-div .ui-datepicker-month').textContent, year: +document.querySelector('#ui-datepicker-div .ui-datepicker-year').textContent})`, &m); err != nil {
			return err
		}
		mt, err := time.Parse("January", m.Month)
		if err != nil {
			return fmt.Errorf("unable to read the month %q", m.Month)
		}
		cur := m.Year*12 + int(mt.Month()) - 1
		if cur == want {
			break
		}
		turn := "#ui-datepicker-div .ui-datepicker-prev"
		if cur < want {
			turn = "#ui-datepicker-div .ui-datepicker-next"
		}
		if err := widgetTap(ctx, p, `document.querySelector('`+turn+`')`); err != nil {
			return err
		}
	}
	day := fmt.Sprintf(`[...document.querySelectorAll('#ui-datepicker-div td[data-handler=selectDay] a')].find(a => a.textContent === '%d')`, t.Day())
	if err := widgetTap(ctx, p, day); err != nil {
		return err
	}
	if err := widgetUntil(ctx, p, `(() => { const d = document.getElementById('ui-datepicker-div'); return !d || getComputedStyle(d).display === 'none'; })()`, 3*time.Second); err != nil {
		return err
	}
	return p.By(ctx, submit, click)
}

// widgetSlide sets a horizontal jQuery UI slider (values lo..hi, shown by
// the element valCSS) to n by
// the mouse: a press on the track away from the handle moves the handle
// there; a target under the handle is reached by dragging the handle. The
// value shown after each try corrects the next (the head's points are
// about 2.5 px apart).
func widgetSlide(ctx context.Context, p *Play, css, valCSS string, lo, hi, n int) error {
	type geo struct {
		Value                   int
		L, W, Y, HL, HR, HX, HY float64
	}
	read := func() (geo, error) {
		var g geo
		err := p.Read(ctx, `(() => { const s = document.querySelector('`+css+`'), h = s.querySelector('.ui-slider-handle');
			const r = s.getBoundingClientRect(), q = h.getBoundingClientRect();
			return {value: parseInt(document.querySelector('`+valCSS+`').textContent, 10), l: r.left, w: r.width, y: r.top + r.height / 2, hl: q.left, hr: q.right, hx: q.left + q.width / 2, hy: q.top + q.height / 2}; })()`, &g)
		return g, err
	}
	cw, _ := widgetCell(p)
	bias := 0.0
	for range 10 {
		g, err := read()
		if err != nil {
			return err
		}
		if g.Value == n {
			return nil
		}
		step := g.W / float64(hi-lo)
		ideal := g.L + float64(n-lo)*step + bias
		x, y := widgetSnap(p, ideal, g.Y)
		// A press off the track's ends is not the slider's: the ends'
		// values are pressed just inside.
		for x > g.L+g.W-0.5 {
			x -= cw
		}
		for x < g.L+0.5 {
			x += cw
		}
		if x < g.HL-1 || x > g.HR+1 {
			if err := p.Do(ctx, env.Action{Type: env.MouseClick, X: x, Y: y}); err != nil {
				return err
			}
		} else {
			sx, sy := widgetSnap(p, g.HX, g.HY)
			tx, ty := widgetSnap(p, sx+float64(n-g.Value)*step+bias, sy)
			if tx == sx {
				tx += math.Copysign(cw, float64(n-g.Value))
			}
			if err := p.Do(ctx, env.Action{Type: env.MouseDragAndDrop, X: sx, Y: sy, ToX: tx, ToY: ty}); err != nil {
				return err
			}
		}
		after, err := read()
		if err != nil {
			return err
		}
		if after.Value != n {
			// Aim a step off the last miss next time, at least a column.
			bias += math.Copysign(max(step/2, cw/2), float64(n-after.Value))
		}
	}
	return fmt.Errorf("the slider did not reach %d", n)
}

// widgetDigits are number-checkboxes' examples: 7 rows of 4 boxes.
var widgetDigits = [10][7]string{
	{".##.", "#..#", "#..#", "#..#", "#..#", "#..#", ".##."},
	{"..#.", ".##.", "..#.", "..#.", "..#.", "..#.", "..#."},
	{".##.", "#..#", "#..#", "..#.", ".#..", "#...", "####"},
	{".##.", "#..#", "...#", ".##.", "...#", "#..#", ".##."},
	{"#...", "#.#.", "#.#.", "####", "..#.", "..#.", "..#."},
	{"####", "#...", "#...", "###.", "...#", "#..#", ".##."},
	{".##.", "#..#", "#...", "###.", "#..#", "#..#", ".##."},
	{"####", "#..#", "...#", "..#.", "..#.", ".#..", ".#.."},
	{".##.", "#..#", "#..#", ".##.", "#..#", "#..#", ".##."},
	{".##.", "#..#", "#..#", ".###", "...#", "#..#", ".##."},
}

// widgetSynonymSets are the word groups click-checkboxes-soft draws from.
var widgetSynonymSets = [][]string{
	{"big", "large", "huge", "enormous", "gigantic"},
	{"small", "tiny", "little", "mini", "petite"},
	{"red", "scarlet", "crimson", "vermillion"},
	{"happy", "cheerful", "joyful", "gleeful", "delighted"},
	{"sad", "unhappy", "sorrowful", "miserable", "tragic"},
	{"angry", "mad", "furious", "irritated"},
	{"evil", "wicked", "immoral", "sinful", "corrupt", "depraved"},
	{"wrong", "incorrect", "mistaken", "erroneous"},
	{"real", "genuine", "actual"},
	{"strange", "odd", "peculiar", "unusual", "weird"},
	{"stop", "cease", "halt", "end", "finish"},
	{"scared", "terrified", "panicked", "fearful", "frightened", "afraid"},
	{"quiet", "calm", "peaceful", "serene", "mild"},
	{"old", "aged", "archaic"},
	{"love", "like", "adore", "favor"},
	{"kill", "murder", "assassinate"},
	{"keep", "retain", "preserve", "sustain", "maintain"},
	{"hide", "conceal", "camouflage"},
	{"hate", "despise", "loathe", "detest", "dislike"},
	{"funny", "humorous", "amusing", "comical", "laughable"},
	{"fat", "fleshy", "plump", "chubby"},
	{"stupid", "dumb", "dull", "unwise"},
	{"delicious", "savory", "delectable", "appetizing"},
	{"cut", "slice", "carve", "chop"},
	{"brave", "courageous", "fearless"},
	{"begin", "start", "initiate", "launch"},
	{"answer", "reply", "response"},
	{"television", "televisions", "TV", "TVs"},
	{"house", "home", "houses", "homes"},
	{"fire", "flame", "fires", "flames"},
	{"pig", "pork", "swine"},
	{"rabbit", "rabbits", "bunny", "bunnies"},
	{"car", "cars", "automobile", "automobiles", "vehicle", "vehicles"},
	{"water"},
}

// widgetSynonyms reports whether two words are of one group.
func widgetSynonyms(a, b string) bool {
	for _, g := range widgetSynonymSets {
		if slices.Contains(g, a) && slices.Contains(g, b) {
			return true
		}
	}
	return false
}
