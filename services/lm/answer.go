package lm

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
)

// Answer is the form of a model's answer.
type Answer string

const (
	// AnswerAction is one action on one line, BrowserGym's form:
	// click("9").
	AnswerAction Answer = "action"
	// AnswerTarget has an action on an element first name the element on
	// a comment line, its role and text before its id, and the language
	// ties the action's bid to that element:
	//
	//	# link "ipsum" [9]
	//	click("9")
	//
	// A small model then chooses an element by writing the goal's words,
	// which it copies well, rather than by its number, which it cannot
	// look up: on 30 synthetic click-link pages (3–7 links) SmolLM2-135M's
	// greedy click named the asked link 5 times with the action form (a
	// sixth of the time, chance), and its comment named it 14–18 times
	// with this one; the id it wrote after a right comment was right 4
	// times of 30, so the language writes it (12-07).
	AnswerTarget Answer = "target"
)

// Answers are the values of -lm-answer.
var Answers = []Answer{AnswerAction, AnswerTarget}

// ParseAnswer is the form named s ("" is AnswerAction).
func ParseAnswer(s string) (Answer, error) {
	a := Answer(cmp.Or(strings.TrimSpace(s), string(AnswerAction)))
	if !slices.Contains(Answers, a) {
		return "", fmt.Errorf("unknown answer form %q: want action or target", s)
	}
	return a, nil
}

// Of is the form an action was answered in, from its recorded output (""
// before the form was recorded: AnswerAction).
func Of(out *eventspb.LMOutput) Answer {
	return Answer(cmp.Or(out.GetAnswer(), string(AnswerAction)))
}

// targetLine is the comment naming element e, role and text first:
// # link "ipsum" [9].
func targetLine(e *eventspb.Element) string {
	var b strings.Builder
	b.WriteString("# " + cmp.Or(e.GetRole(), "element"))
	if t := oneLine(e.GetText(), PromptOptions{}.withDefaults().MaxText); t != "" {
		b.WriteString(" " + strconv.Quote(t))
	}
	b.WriteString(" [" + e.GetBid() + "]\n")
	return b.String()
}

// AnswerText is what a model answering in form a writes for action act on
// obs (its Raw text, and in AnswerTarget form, when it acts on an element,
// that element's comment line first): a demonstration's answer, cloned
// token by token.
func AnswerText(obs *eventspb.Observation, act *eventspb.Action, a Answer) string {
	raw := act.GetRaw()
	if r, ok := action.ByType(act.GetType()); a != AnswerTarget || !ok || r.Target != action.TargetElement {
		return raw
	}
	for _, e := range obs.GetElements() {
		if e.GetBid() == act.GetBid() {
			return targetLine(e) + raw
		}
	}
	return raw
}
