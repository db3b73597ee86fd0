package lm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
)

// maxGrammarText bounds a typed text in the grammar (characters): one
// action's value, never a paragraph.
const maxGrammarText = 80

// Grammar is a GBNF grammar (llama.cpp's; vLLM and SGLang take it as
// guided_grammar) of the one-line answers ParseReply accepts on obs's page
// with action set s: each action of the set with its arguments, an element
// argument one of the page's bids (a fill's a text field's, a select's a
// select's), a select's option one of its options, strings without quotes
// or backslashes, numbers of at most 4 digits. A server that honours it
// can only answer with an action the page can take (ParseReply still
// checks a point against the frame). The element actions of avoid (a
// greedy episode's actions already taken from this page state, as
// policy.GreedyAvoiding leaves them out) are left out of the grammar: a
// click, double click or hover of the same bid; other actions stay.
func Grammar(obs *eventspb.Observation, s action.Set, avoid ...*eventspb.Action) string {
	var alts []string
	var rules []string
	rule := func(name, body string) { rules = append(rules, name+" ::= "+body) }
	bidsOf := func(roles []string) []string {
		var out []string
		for _, e := range obs.GetElements() {
			if e.GetBid() != "" && (len(roles) == 0 || slices.Contains(roles, e.GetRole())) && !slices.Contains(out, e.GetBid()) {
				out = append(out, e.GetBid())
			}
		}
		return out
	}
	quoted := func(xs []string) string {
		q := make([]string, len(xs))
		for i, x := range xs {
			q[i] = gbnfString(strconv.Quote(x))
		}
		return "(" + strings.Join(q, " | ") + ")"
	}
	for _, t := range s.Types() {
		r, _ := action.ByType(t)
		name := string(r.Name)
		call := func(args ...string) {
			body := gbnfString(name + "(")
			for i, a := range args {
				if i > 0 {
					body += ` ", " `
				}
				body += " " + a
			}
			alts = append(alts, body+` ")"`)
		}
		bids := bidsOf(r.Roles)
		if r.Name == action.Click || r.Name == action.DblClick || r.Name == action.Hover {
			bids = slices.DeleteFunc(bids, func(b string) bool {
				return slices.ContainsFunc(avoid, func(a *eventspb.Action) bool { return a.GetType() == t && a.GetBid() == b })
			})
		}
		if r.Target == action.TargetElement && len(bids) == 0 {
			continue // nothing on the page this action can target
		}
		switch r.Name {
		case action.Noop, action.GoBack:
			call()
		case action.Click, action.DblClick, action.Hover:
			call(quoted(bids))
		case action.Fill:
			call(quoted(bids), "str")
		case action.SelectOption:
			// A select's own options: one alternative per select.
			for _, e := range obs.GetElements() {
				if !slices.Contains(bids, e.GetBid()) || len(e.GetOptions()) == 0 {
					continue
				}
				call(quoted([]string{e.GetBid()}), quoted(e.GetOptions()))
			}
		case action.Scroll:
			call("int", "int")
		case action.Press:
			call("key")
		case action.SendMsg, action.KeyboardType:
			call("str")
		case action.MouseClick, action.MouseMove:
			call("num", "num")
		case action.MouseDragAndDrop:
			call("num", "num", "num", "num")
		}
	}
	rule("root", strings.Join(alts, " | "))
	rule("str", fmt.Sprintf(`"\"" [^"\\\x00-\x1f]{0,%d} "\""`, maxGrammarText))
	rule("key", `"\"" [A-Za-z0-9+]{1,24} "\""`)
	rule("num", "[0-9]{1,4}")
	rule("int", `"-"? [0-9]{1,4}`)
	return strings.Join(rules, "\n") + "\n"
}

// gbnfString is s as a GBNF string literal.
func gbnfString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}
