package lm

import (
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
func Grammar(obs *eventspb.Observation, s action.Set, a Answer, avoid ...*eventspb.Action) string {
	return NewLanguage(obs, s, a, avoid...).Grammar()
}

// gbnfString is s as a GBNF string literal.
func gbnfString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}
