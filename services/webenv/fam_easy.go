package webenv

import (
	"strings"
)

// The easy tier: one page, 1–3 facts, 1–3 steps (the MiniWoB area size).

func init() {
	register("click-button", genClickButton)
	register("click-link", genClickLink)
	register("pick-color", genPickColor)
	register("tick-checkboxes", genTickCheckboxes)
	register("type-text", genTypeText)
	register("focus-and-type", genFocusAndType)
	register("choose-radio", genChooseRadio)
	register("dismiss-dialog", genDismissDialog)
	register("click-shape", genClickShape)
	register("copy-text", genCopyText)
	register("click-in-list", genClickInList)
}

// listWords joins words as "a, b and c".
func listWords(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = `"` + w + `"`
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func genClickButton(g *gen) {
	n := g.Range(3, 6)
	labels := g.Sample(buttonWords, n)
	target := labels[g.Intn(n)]
	g.instr(`Click on the "%s" button.`, target)
	var b hb
	b.f(`<div style="padding-top:%dpx;padding-left:%dpx">`, g.Range(0, 24), g.Range(0, 20))
	for _, l := range labels {
		if g.site.Variant%2 == 1 && n <= 4 {
			b.f(`<div><button data-k="btn" data-v="%s" style="margin:%dpx 0 0 %dpx">%s</button></div>`, esc(l), g.Range(1, 6), g.Range(0, 40), esc(l))
			continue
		}
		b.f(`<button data-k="btn" data-v="%s" style="margin:%dpx %dpx">%s</button>`, esc(l), g.Range(2, 7), g.Range(2, 10), esc(l))
	}
	b.f(`</div>`)
	g.p.HTML = b.String()
	g.endOn("btn")
	g.fact(factEnded(`clicked the "`+target+`" button`, "click", "btn", target))
	g.plan("click", "button"+sel("data-v", target), "")
}

func genClickLink(g *gen) {
	words := g.Sample(wordsCommon, g.Range(12, 18))
	nl := g.Range(3, 5)
	isLink := map[int]bool{}
	for _, i := range g.Perm(len(words))[:nl] {
		isLink[i] = true
	}
	var links []string
	var b hb
	b.f(`<p style="margin:%dpx 2px;line-height:1.6">`, g.Range(2, 16))
	for i, w := range words {
		if isLink[i] {
			b.f(`<a href="#" data-k="link" data-v="%s">%s</a> `, esc(w), esc(w))
			links = append(links, w)
		} else {
			b.f(`%s `, esc(w))
		}
	}
	b.f(`</p>`)
	target := g.Pick(links)
	g.instr(`Click on the link "%s".`, target)
	g.p.HTML = b.String()
	g.endOn("link")
	g.fact(factEnded(`clicked the link "`+target+`"`, "click", "link", target))
	g.plan("click", "a"+sel("data-v", target), "")
}

func genPickColor(g *gen) {
	cols := g.Sample(colorNames, g.Range(4, 6))
	target := g.Pick(cols)
	switch g.site.Variant {
	case 1:
		g.instr(`Click the %s square.`, target)
	case 3:
		g.instr(`Select the colour %s from the palette.`, target)
	default:
		g.instr(`Pick the colour %s.`, target)
	}
	var b hb
	b.f(`<div style="margin-top:%dpx;padding-left:%dpx">`, g.Range(4, 40), g.Range(0, 30))
	for i, c := range cols {
		b.f(`<span class="swatch" role="button" data-k="color" data-v="%s" style="background:%s"></span>`, c, colorValues[c])
		if g.site.Variant == 2 && i == len(cols)/2-1 {
			b.f(`<br>`)
		}
	}
	b.f(`</div>`)
	g.p.HTML = b.String()
	g.endOn("color")
	g.fact(factEnded("picked "+target, "click", "color", target))
	g.plan("click", ".swatch"+sel("data-v", target), "")
}

func genTickCheckboxes(g *gen) {
	n := g.Range(3, 6)
	words := g.Sample(wordsCommon, n)
	k := g.Range(1, min(3, n-1))
	targets := g.Sample(words, k)
	isTarget := map[string]bool{}
	for _, t := range targets {
		isTarget[t] = true
	}
	g.instr(`Select %s and click %s.`, listWords(targets), g.site.SubmitLabel)
	var b hb
	b.f(`<div style="margin-top:%dpx">`, g.Range(0, 10))
	for _, w := range words {
		b.f(`<div class="row"><label><input type="checkbox" data-k="cb:%s"> %s</label></div>`, esc(w), esc(w))
	}
	b.f(`<button data-k="submit" style="margin-left:%dpx">%s</button></div>`, g.Range(0, 40), esc(g.site.SubmitLabel))
	g.p.HTML = b.String()
	g.endOn("submit")
	g.fact(Fact{Name: "ticked " + listWords(targets), Group: "boxes", Check: func(st *State) bool {
		for _, t := range targets {
			if st.Values["cb:"+t] != "1" {
				return false
			}
		}
		return true
	}})
	g.fact(Fact{Name: "left the other boxes unticked", Group: "boxes", Check: func(st *State) bool {
		for _, w := range words {
			if !isTarget[w] && st.Values["cb:"+w] == "1" {
				return false
			}
		}
		return true
	}})
	g.fact(factEnded("submitted", "submit", "submit", ""))
	for _, w := range words {
		if isTarget[w] {
			g.plan("click", "input"+sel("data-k", "cb:"+w), "")
		}
	}
	g.plan("click", "button"+sel("data-k", "submit"), "")
}

func genTypeText(g *gen) {
	text := g.Pick(wordsCommon)
	if g.Chance(0.5) {
		text = g.Word(g.Range(2, 3))
	}
	g.instr(`Type "%s" into the text box and press %s.`, text, g.site.SubmitLabel)
	var b hb
	b.f(`<div style="margin-top:%dpx;padding-left:%dpx">`, g.Range(2, 30), g.Range(0, 20))
	b.f(`<input type="text" data-k="text" style="width:%dpx"><br>`, g.Range(90, 130))
	b.f(`<button data-k="submit" style="margin-top:%dpx">%s</button></div>`, g.Range(4, 20), esc(g.site.SubmitLabel))
	g.p.HTML = b.String()
	g.endOn("submit")
	g.fact(factEq(`typed "`+text+`"`, "text", "text", text, false))
	g.fact(factEnded("submitted", "submit", "submit", ""))
	g.plan("fill", "input"+sel("data-k", "text"), text)
	g.plan("click", "button"+sel("data-k", "submit"), "")
}

var fieldLabels = []string{"First name", "Last name", "City", "Code", "Nickname", "Colour", "Pet", "Team", "Hobby", "Street"}

func genFocusAndType(g *gen) {
	labels := g.Sample(fieldLabels, g.Range(2, 3))
	target := g.Pick(labels)
	text := g.Word(2)
	g.instr(`Click the "%s" field, type "%s" and press Enter.`, target, text)
	var b hb
	b.f(`<div style="margin-top:%dpx">`, g.Range(0, 16))
	for _, l := range labels {
		if g.site.Variant%2 == 0 {
			b.f(`<div class="row"><label>%s<br><input type="text" data-k="f:%s" data-enter style="width:120px"></label></div>`, esc(l), esc(slug(l)))
		} else {
			b.f(`<div class="row"><input type="text" data-k="f:%s" data-enter placeholder="%s" style="width:120px"></div>`, esc(slug(l)), esc(l))
		}
	}
	b.f(`</div>`)
	g.p.HTML = b.String()
	g.p.EnterEnds = true
	key := "f:" + slug(target)
	g.fact(factEq(`typed "`+text+`" in `+target, "type", key, text, false))
	g.fact(Fact{Name: "left the other fields empty", Group: "type", Check: func(st *State) bool {
		for _, l := range labels {
			if l != target && strings.TrimSpace(st.Values["f:"+slug(l)]) != "" {
				return false
			}
		}
		return true
	}})
	g.fact(factEnded("pressed Enter in "+target, "enter", key, ""))
	g.plan("click", "input"+sel("data-k", key), "")
	g.plan("type", "input"+sel("data-k", key), text)
	g.plan("press", "input"+sel("data-k", key), "Enter")
}

func genChooseRadio(g *gen) {
	opts := g.Sample(wordsCommon, g.Range(3, 5))
	for i := range opts {
		opts[i] = title(opts[i])
	}
	target := g.Pick(opts)
	g.instr(`Choose "%s" and click %s.`, target, g.site.SubmitLabel)
	var b hb
	b.f(`<div style="margin-top:%dpx;padding-left:%dpx">`, g.Range(0, 12), g.Range(0, 24))
	for _, o := range opts {
		b.f(`<div class="row"><label><input type="radio" name="choice" data-k="choice" data-v="%s"> %s</label></div>`, esc(o), esc(o))
	}
	b.f(`<button data-k="submit">%s</button></div>`, esc(g.site.SubmitLabel))
	g.p.HTML = b.String()
	g.endOn("submit")
	g.fact(factEq(`chose "`+target+`"`, "choice", "choice", target, false))
	g.fact(factEnded("submitted", "submit", "submit", ""))
	g.plan("click", "input"+sel("data-v", target), "")
	g.plan("click", "button"+sel("data-k", "submit"), "")
}

var dialogPairs = [][2]string{{"OK", "Cancel"}, {"Yes", "No"}, {"Accept", "Decline"}, {"Confirm", "Dismiss"}}

func genDismissDialog(g *gen) {
	pair := dialogPairs[g.Intn(len(dialogPairs))]
	choices := map[string]string{"ok": pair[0], "cancel": pair[1], "x": "×"}
	which := []string{"ok", "cancel", "x"}[g.Intn(3)]
	if which == "x" {
		g.instr(`Close the dialog with the × in its corner.`)
	} else {
		g.instr(`Close the dialog by clicking "%s".`, choices[which])
	}
	words := g.Sample(wordsCommon, 10)
	var b hb
	b.f(`<p class="muted">%s</p>`, esc(strings.Join(words, " ")))
	b.f(`<div class="dialog" role="dialog" style="top:%dpx">`, g.Range(4, 40))
	b.f(`<button class="x" data-k="dlg" data-v="x" aria-label="close">×</button>`)
	b.f(`<div style="margin:10px 0 8px">%s %s?</div>`, esc(title(g.Pick(wordsCommon))), esc(g.Pick(wordsCommon)))
	first, second := "ok", "cancel"
	if g.site.Variant >= 2 {
		first, second = second, first
	}
	b.f(`<button data-k="dlg" data-v="%s">%s</button> <button data-k="dlg" data-v="%s">%s</button></div>`,
		first, esc(choices[first]), second, esc(choices[second]))
	g.p.HTML = b.String()
	g.endOn("dlg")
	g.fact(factEnded("closed the dialog with "+choices[which], "click", "dlg", which))
	g.plan("click", "button"+sel("data-v", which), "")
}

func genClickShape(g *gen) {
	n := g.Range(3, 6)
	type item struct{ color, shape string }
	seen := map[item]bool{}
	var items []item
	for len(items) < n {
		it := item{g.Pick(colorNames[:7]), g.Pick(shapeNames)}
		if !seen[it] {
			seen[it] = true
			items = append(items, it)
		}
	}
	t := items[g.Intn(n)]
	g.instr(`Click the %s %s.`, t.color, t.shape)
	cells := g.Perm(12) // a 4x3 grid of 36x40 cells
	var b hb
	b.f(`<div style="position:relative;height:150px">`)
	for i, it := range items {
		c := cells[i]
		x := (c%4)*36 + g.Range(0, 8)
		y := (c/4)*44 + g.Range(0, 12)
		b.f(`<div class="shape shape-%s" role="button" data-k="shape" data-v="%s %s" style="left:%dpx;top:%dpx;background:%s"></div>`,
			it.shape, it.color, it.shape, x, y, colorValues[it.color])
	}
	b.f(`</div>`)
	g.p.HTML = b.String()
	g.endOn("shape")
	v := t.color + " " + t.shape
	g.fact(factEnded("clicked the "+v, "click", "shape", v))
	g.plan("click", ".shape"+sel("data-v", v), "")
}

func genCopyText(g *gen) {
	code := g.Code(3) + "-" + g.Digits(g.Range(2, 3))
	g.instr(`Copy the code shown below into the box and press %s.`, g.site.SubmitLabel)
	var b hb
	b.f(`<div class="card" style="margin-top:%dpx">Code: <b style="font-family:monospace;font-size:13px">%s</b></div>`, g.Range(0, 12), esc(code))
	b.f(`<input type="text" data-k="code" placeholder="code" style="width:110px;margin-top:%dpx"> `, g.Range(2, 14))
	b.f(`<button data-k="submit">%s</button>`, esc(g.site.SubmitLabel))
	g.p.HTML = b.String()
	g.endOn("submit")
	g.fact(factEq("typed the code "+code, "code", "code", code, true))
	g.fact(factEnded("submitted", "submit", "submit", ""))
	g.plan("fill", "input"+sel("data-k", "code"), code)
	g.plan("click", "button"+sel("data-k", "submit"), "")
}

func genClickInList(g *gen) {
	items := g.Sample(wordsCommon, g.Range(12, 20))
	for i := range items {
		items[i] = title(items[i])
	}
	target := items[g.Range(len(items)/2, len(items)-1)]
	g.instr(`Find "%s" in the list and click it.`, target)
	var b hb
	b.f(`<div style="height:%dpx;overflow-y:auto;border:1px solid #bbb">`, g.Range(110, 140))
	for _, it := range items {
		b.f(`<div class="list-item" role="button" data-k="item" data-v="%s">%s</div>`, esc(it), esc(it))
	}
	b.f(`</div>`)
	g.p.HTML = b.String()
	g.endOn("item")
	g.fact(factEnded(`clicked "`+target+`"`, "click", "item", target))
	g.plan("click", ".list-item"+sel("data-v", target), "")
}
