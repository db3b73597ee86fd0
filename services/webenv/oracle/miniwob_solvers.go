package oracle

import (
	"context"
	"fmt"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

var (
	click = env.Action{Type: env.Click}
	// submit is the MiniWoB++ pages' Submit button.
	submit = "#subbtn"
)

func fill(s string) env.Action { return env.Action{Type: env.Fill, Text: s} }

// steps runs a solver's steps in order, up to the first error.
func steps(fs ...func() error) error {
	for _, f := range fs {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// The scripted solvers: each reads the instruction (and, where a person
// reads it off the screen, the page) and acts with BrowserGym's actions.
// They are the MiniWoB++ side of the expressiveness audit and the tests'
// demonstrations; a task without one is listed "no solution" by the audit.
// One map per kind of task, each in its own file.
var miniwobSolvers = merged(basicSolvers, formSolvers, widgetSolvers, mouseSolvers)

// merged joins the solver maps; a task in two is a programming error.
func merged(maps ...map[string]MiniWoBSolver) map[string]MiniWoBSolver {
	out := map[string]MiniWoBSolver{}
	for _, m := range maps {
		for name, s := range m {
			if _, dup := out[name]; dup {
				panic("oracle: two scripted solvers for " + name)
			}
			out[name] = s
		}
	}
	return out
}

// basicSolvers: the first solvers, the tasks of the click-and-type kind.
var basicSolvers = map[string]MiniWoBSolver{
	"click-test": func(ctx context.Context, p *Play) error { return p.By(ctx, submit, click) },
	"click-test-2": func(ctx context.Context, p *Play) error {
		return p.By(ctx, submit, click) // ONE; TWO is #subbtn2
	},
	"click-test-transfer": func(ctx context.Context, p *Play) error {
		b, err := p.Between("Click button ", ".")
		if err != nil {
			return err
		}
		return p.By(ctx, map[string]string{"ONE": submit, "TWO": "#subbtn2"}[b], click)
	},
	"click-button-sequence": func(ctx context.Context, p *Play) error {
		return steps(func() error { return p.By(ctx, submit, click) }, func() error { return p.By(ctx, "#subbtn2", click) })
	},
	"click-button": func(ctx context.Context, p *Play) error {
		q, err := p.Quote(0)
		if err != nil {
			return err
		}
		return p.On(ctx, "button", q, click)
	},
	"click-link": func(ctx context.Context, p *Play) error {
		q, err := p.Quote(0)
		if err != nil {
			return err
		}
		return p.On(ctx, "", q, click)
	},
	"click-dialog": func(ctx context.Context, p *Play) error {
		return p.By(ctx, "button.ui-dialog-titlebar-close", click)
	},
	"click-dialog-2": func(ctx context.Context, p *Play) error {
		b, err := p.Quote(0)
		if err != nil {
			return err
		}
		if b == "x" {
			return p.By(ctx, "button.ui-dialog-titlebar-close", click)
		}
		return p.On(ctx, "button", b, click)
	},
	"click-checkboxes":          checkboxes,
	"click-checkboxes-large":    checkboxes,
	"click-checkboxes-transfer": checkboxes,
	"unicode-test": func(ctx context.Context, p *Play) error {
		q, err := p.Quote(0)
		if err != nil {
			return err
		}
		return p.On(ctx, "", q, click)
	},
	"enter-time": func(ctx context.Context, p *Play) error {
		tm, err := p.Between("Enter ", " as the time and press submit.")
		if err != nil {
			return err
		}
		// Typed as a person types it (5:38 PM); fill gives the time
		// input its value.
		return steps(func() error { return p.By(ctx, "#tt", fill(tm)) }, func() error { return p.By(ctx, submit, click) })
	},
	"simple-arithmetic": func(ctx context.Context, p *Play) error {
		var prob string
		if err := p.Read(ctx, `document.querySelector('#math-problem').textContent`, &prob); err != nil {
			return err
		}
		var a, b int
		var op string
		if _, err := fmt.Sscanf(prob, "%d %s %d =", &a, &op, &b); err != nil {
			return fmt.Errorf("unable to read the problem %q: %w", prob, err)
		}
		r := map[string]int{"+": a + b, "-": a - b, "x": a * b}
		ans, ok := r[op]
		if !ok {
			return fmt.Errorf("unknown operation %q in %q", op, prob)
		}
		return steps(func() error { return p.By(ctx, "#math-answer", fill(fmt.Sprint(ans))) }, func() error { return p.By(ctx, submit, click) })
	},
	"find-word": func(ctx context.Context, p *Play) error {
		pos, err := p.Between("Find the ", " word in the paragraph")
		if err != nil {
			return err
		}
		var n int
		if _, err := fmt.Sscanf(pos, "%d", &n); err != nil || n < 1 {
			return fmt.Errorf("unable to read the position %q", pos)
		}
		var text string
		if err := p.Read(ctx, `document.querySelector('#area p').textContent`, &text); err != nil {
			return err
		}
		words := strings.Fields(text)
		if n > len(words) {
			return fmt.Errorf("the paragraph %q has %d words, want the %s", text, len(words), pos)
		}
		w := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
				return r
			}
			return -1
		}, words[n-1])
		return steps(func() error { return p.By(ctx, "#answer-input", fill(w)) }, func() error { return p.By(ctx, submit, click) })
	},
	"multi-orderings": movieSearch,
	"multi-layouts":   movieSearch,
	"click-option": func(ctx context.Context, p *Play) error {
		o, err := p.Between("Select ", " and click Submit.")
		if err != nil {
			return err
		}
		return steps(func() error { return p.On(ctx, "radio", o, click) }, func() error { return p.On(ctx, "button", "Submit", click) })
	},
	"click-tab": func(ctx context.Context, p *Play) error {
		n, err := p.Between("Click on Tab #", ".")
		if err != nil {
			return err
		}
		return p.On(ctx, "", "Tab #"+n, click)
	},
	"click-collapsible":           collapsible,
	"click-collapsible-nodelay":   collapsible,
	"click-collapsible-2":         hiddenLink,
	"click-collapsible-2-nodelay": hiddenLink,
	"click-tab-2":                 hiddenLink,
	"click-tab-2-easy":            hiddenLink,
	"click-tab-2-medium":          hiddenLink,
	"click-tab-2-hard":            hiddenLink,
	"identify-shape": func(ctx context.Context, p *Play) error {
		// What the figure is, read off the drawing: a glyph is a letter or
		// a digit; otherwise its element says its shape.
		var kind string
		if err := p.Read(ctx, `(() => {
			const t = document.querySelector('#area_svg text');
			if (t) return /^[0-9]$/.test(t.textContent.trim()) ? 'digit' : 'letter';
			const s = document.querySelector('#area_svg circle, #area_svg rect, #area_svg polygon');
			return s ? {circle: 'circle', rect: 'rectangle', polygon: 'triangle'}[s.tagName] : '';
		})()`, &kind); err != nil {
			return err
		}
		if kind == "" {
			return fmt.Errorf("no figure drawn")
		}
		return p.By(ctx, fmt.Sprintf(`#area-buttons button[data-type=%q]`, kind), click)
	},
	"click-widget": func(ctx context.Context, p *Play) error {
		w, err := p.Quote(0)
		if err != nil {
			return err
		}
		return p.By(ctx, fmt.Sprintf(`#area [data-type=%q]`, w), click)
	},
	"focus-text": func(ctx context.Context, p *Play) error { return p.By(ctx, "#tt", click) },
	"focus-text-2": func(ctx context.Context, p *Play) error {
		pos, err := p.Between("Focus into the ", " input textbox.")
		if err != nil {
			return err
		}
		i := strings.Index("1st2nd3rd", pos)
		if i < 0 || len(pos) != 3 {
			return fmt.Errorf("unknown position %q", pos)
		}
		return p.By(ctx, fmt.Sprintf("#tt%d", i/3+1), click)
	},
	"enter-text": func(ctx context.Context, p *Play) error {
		return typeAndSubmit(ctx, p, func(q string) string { return q })
	},
	"enter-text-dynamic": func(ctx context.Context, p *Play) error {
		return typeAndSubmit(ctx, p, func(q string) string { return q })
	},
	"enter-text-2": func(ctx context.Context, p *Play) error {
		return typeAndSubmit(ctx, p, func(q string) string {
			if strings.Contains(p.Obs.Instruction, "upper case") {
				return strings.ToUpper(q)
			}
			return strings.ToLower(q)
		})
	},
	"enter-password": func(ctx context.Context, p *Play) error {
		pw, err := p.Quote(0)
		if err != nil {
			return err
		}
		return steps(func() error { return p.By(ctx, "#password", fill(pw)) },
			func() error { return p.By(ctx, "#verify", fill(pw)) },
			func() error { return p.By(ctx, submit, click) })
	},
	"login-user": func(ctx context.Context, p *Play) error {
		q := p.Quoted()
		if len(q) < 2 {
			return fmt.Errorf("the instruction %q names no username and password", p.Obs.Instruction)
		}
		return steps(func() error { return p.By(ctx, "#username", fill(q[0])) },
			func() error { return p.By(ctx, "#password", fill(q[1])) },
			func() error { return p.By(ctx, submit, click) })
	},
	"choose-list": func(ctx context.Context, p *Play) error {
		item, err := p.Between("Select ", " from the list and click Submit.")
		if err != nil {
			return err
		}
		return steps(func() error {
			return p.By(ctx, "#options", env.Action{Type: env.SelectOption, Options: []string{item}})
		},
			func() error { return p.On(ctx, "button", "Submit", click) })
	},
	"enter-date": func(ctx context.Context, p *Play) error {
		d, err := p.Between("Enter ", " as the date and hit submit.")
		if err != nil {
			return err
		}
		var mm, dd, yyyy string
		if _, err := fmt.Sscanf(d, "%2s/%2s/%4s", &mm, &dd, &yyyy); err != nil {
			return fmt.Errorf("unable to read the date %q: %w", d, err)
		}
		// Typed as a person types a date into the field (mm/dd/yyyy); fill
		// gives the input its value.
		return steps(func() error { return p.By(ctx, "#tt", fill(d)) }, func() error { return p.By(ctx, submit, click) })
	},
	"grid-coordinate": func(ctx context.Context, p *Play) error {
		var gx, gy int
		c, err := p.Between("Click on the grid coordinate ", ".")
		if err != nil {
			return err
		}
		if _, err := fmt.Sscanf(c, "(%d,%d)", &gx, &gy); err != nil {
			return fmt.Errorf("unable to read the coordinate %q: %w", c, err)
		}
		// The page draws point (x, y) at (30(x+2)+15, 30(2−y)+15) of its
		// SVG: where the SVG is, not the circle, is read off the page.
		var svg struct{ Left, Top float64 }
		if err := p.Read(ctx, `(() => { const r = document.querySelector('svg').getBoundingClientRect(); return {left: r.left, top: r.top}; })()`, &svg); err != nil {
			return err
		}
		return p.Do(ctx, env.Action{Type: env.MouseClick, X: svg.Left + float64(30*(gx+2)+15), Y: svg.Top + float64(30*(2-gy)+15)})
	},
	"drag-box": func(ctx context.Context, p *Play) error {
		// Centre onto centre, pressed and released at points (the policy
		// drags by its point head): the small box (20 px) lands 15 px
		// inside the large one (50 px).
		small, large := p.ByID("draggableSmall"), p.ByID("draggableLarge")
		if small == nil || large == nil {
			return fmt.Errorf("no boxes #draggableSmall and #draggableLarge on the page")
		}
		x0, y0 := small.Box.Center()
		x1, y1 := large.Box.Center()
		return steps(func() error { return p.Do(ctx, env.Action{Type: env.MouseDragAndDrop, X: x0, Y: y0, ToX: x1, ToY: y1}) },
			func() error { return p.By(ctx, submit, click) })
	},
	"highlight-text": func(ctx context.Context, p *Play) error {
		// From three quarters into the last non-space glyph back to a
		// quarter into the first: the caret lands after the one and before
		// the other. Backwards, because a drag's end is hit-tested as the
		// pointer moves, and an end just past the last line was taken for
		// the reward display below it; the press is exact.
		var span struct{ X0, Y0, X1, Y1 float64 }
		if err := p.Read(ctx, `(() => {
			const n = document.querySelector('#randomText').firstChild, s = n.textContent;
			const at = i => { const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1); return r.getBoundingClientRect(); };
			let i = 0, j = s.length - 1;
			while (i < j && /\s/.test(s[i])) i++;
			while (j > i && /\s/.test(s[j])) j--;
			const a = at(i), b = at(j);
			return {x0: a.left + a.width / 4, y0: a.top + a.height / 2, x1: b.left + 3 * b.width / 4, y1: b.top + b.height / 2};
		})()`, &span); err != nil {
			return err
		}
		return steps(func() error {
			return p.Do(ctx, env.Action{Type: env.MouseDragAndDrop, X: span.X1, Y: span.Y1, ToX: span.X0, ToY: span.Y0})
		}, func() error { return p.By(ctx, submit, click) })
	},
}

// collapsible opens the section and submits.
func collapsible(ctx context.Context, p *Play) error {
	return steps(func() error { return p.By(ctx, "#area h3", click) }, func() error { return p.By(ctx, submit, click) })
}

// hiddenLink clicks the link the instruction quotes, in a collapsed
// section or a tab not shown: first the section's header or the tab that
// holds it, unless it is shown, then the link.
func hiddenLink(ctx context.Context, p *Play) error {
	q, err := p.Quote(0)
	if err != nil {
		return err
	}
	link := fmt.Sprintf(`[...document.querySelectorAll('#area .alink')].find(e => e.textContent === %q)`, q)
	var shown bool
	if err := p.Read(ctx, `(() => { const l = `+link+`; return !!l && l.getClientRects().length > 0; })()`, &shown); err != nil {
		return err
	}
	if !shown {
		// An accordion's panel follows its header; a tab's is named by
		// its anchor's href.
		opener := `(() => { const l = ` + link + `; if (!l) return null;
			const panel = l.closest('.ui-accordion-content, .ui-tabs-panel');
			if (!panel) return null;
			if (panel.classList.contains('ui-tabs-panel')) return document.querySelector('a[href="#' + panel.id + '"]');
			return panel.previousElementSibling; })()`
		if err := p.ByJS(ctx, opener, click); err != nil {
			return err
		}
	}
	return p.ByJS(ctx, link, click)
}

// checkboxes ticks the boxes the instruction names ("Select a, b and click
// Submit.", or "nothing") and submits.
func checkboxes(ctx context.Context, p *Play) error {
	names, err := p.Between("Select ", " and click Submit.")
	if err != nil {
		return err
	}
	if names != "nothing" {
		for _, n := range strings.Split(names, ", ") {
			if err := p.On(ctx, "checkbox", n, click); err != nil {
				return err
			}
		}
	}
	return p.On(ctx, "button", "Submit", click)
}

// movieSearch fills multi-layouts' and multi-orderings' search form: each
// field is found by the words beside it, whatever the layout, and the form
// sent by its one control named Submit, Search or Go!.
func movieSearch(ctx context.Context, p *Play) error {
	// "Search for <genre> movies directed by <name> from year <year>."
	q := strings.TrimSuffix(strings.TrimPrefix(p.Obs.Instruction, "Search for "), ".")
	parts := strings.Split(strings.NewReplacer(" movies directed by ", "|", " from year ", "|").Replace(q), "|")
	if len(parts) != 3 {
		return fmt.Errorf("unable to read the search of %q", p.Obs.Instruction)
	}
	genre, director, year := parts[0], parts[1], parts[2]
	field := func(label string) string {
		return `[...document.querySelectorAll('#area input')].find(i => ` +
			`new RegExp(` + fmt.Sprintf("%q", label) + `, 'i').test((i.closest('tr, p, .row, .field, .ui-entry') || i.parentElement).textContent))`
	}
	return steps(func() error { return p.ByJS(ctx, field("genre"), fill(genre)) },
		func() error { return p.ByJS(ctx, field("director"), fill(director)) },
		func() error { return p.ByJS(ctx, field("year|date"), fill(year)) },
		func() error {
			return p.ByJS(ctx, `[...document.querySelectorAll('#area *')].find(e => e.children.length === 0 && /^(Submit|Search|Go!)$/.test(e.textContent.trim()))`, click)
		})
}

// typeAndSubmit fills #tt with the instruction's first quoted phrase as
// want makes it, then submits.
func typeAndSubmit(ctx context.Context, p *Play, want func(string) string) error {
	q, err := p.Quote(0)
	if err != nil {
		return err
	}
	return steps(func() error { return p.By(ctx, "#tt", fill(want(q))) }, func() error { return p.By(ctx, submit, click) })
}
