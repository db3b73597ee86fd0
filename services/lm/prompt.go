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

// Message is one chat message of the OpenAI chat API.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// PromptOptions bound what a prompt holds. The zero value takes every
// default.
type PromptOptions struct {
	// Set is the action space offered (default action.SetBidCoord).
	Set action.Set
	// MaxElements is how many elements are listed, in page order
	// (default 60): a prompt's length is a model's time per step.
	MaxElements int
	// MaxPageText is how many lines of the page's text are given
	// (default 16).
	MaxPageText int
	// MaxText clips each element text, value and text line in runes
	// (default 80).
	MaxText int
	// Answer is the answer's form the system message asks for (default
	// AnswerAction).
	Answer Answer
}

func (o PromptOptions) withDefaults() PromptOptions {
	if o.Set == "" {
		o.Set = action.SetBidCoord
	}
	if o.MaxElements <= 0 {
		o.MaxElements = 60
	}
	if o.MaxPageText <= 0 {
		o.MaxPageText = 16
	}
	if o.MaxText <= 0 {
		o.MaxText = 80
	}
	if o.Answer == "" {
		o.Answer = AnswerAction
	}
	return o
}

// System is the system message for action set s and answer form a: what
// the agent is and the grammar of its answer, a line per action of the
// set, from the action table.
func System(s action.Set, a Answer) string {
	var b strings.Builder
	b.WriteString("You are a web agent. You see a web page as a list of elements, each with its id in brackets, and you act on it to reach the goal.\n")
	if a == AnswerTarget {
		b.WriteString("Answer with exactly one action, and nothing else. Before an action on an element, name the element on a comment line, its role and text first and its id last, then write the action on the next line:\n")
		b.WriteString("# button \"<text>\" [<id>]\nclick(\"<id>\")\n")
		b.WriteString("The actions:\n")
	} else {
		b.WriteString("Answer with exactly one action on one line, and nothing else. The actions:\n")
	}
	// noop goes last: listed first (the action table's order), it was the
	// base model's greedy answer to the bid set's prompt in 95 of 105
	// steps of focus-text-2 and click-dialog (12-07), every episode then
	// running out of steps.
	noop := func(t eventspb.ActionType) bool { return t == eventspb.ActionType_ACTION_TYPE_NOOP }
	types := s.Types()
	if slices.ContainsFunc(types, noop) {
		types = append(slices.DeleteFunc(slices.Clone(types), noop), eventspb.ActionType_ACTION_TYPE_NOOP)
	}
	for _, t := range types {
		r, _ := action.ByType(t)
		fmt.Fprintf(&b, "%s(%s): %s\n", r.Name, signature(r), r.Doc)
	}
	// The examples name no real id: a small model copies an example's id
	// (with click("12") here, SmolLM2-135M's first click in click-option
	// went to the page's element 12 in 31 of 120 sampled episodes).
	if s == action.SetBidCoord {
		b.WriteString(`Ids and text are quoted strings, an id being the number in an element's brackets, and points are numbers in the page's pixels: click("<id>"), fill("<id>", "hello"), mouse_click(<x>, <y>).`)
	} else {
		b.WriteString(`Ids and text are quoted strings, an id being the number in an element's brackets: click("<id>"), fill("<id>", "hello").`)
	}
	return b.String()
}

// signature is a row's parameters, the optional ones in brackets:
// scroll(delta_x, delta_y[, bid, x, y]).
func signature(r action.Row) string {
	req := strings.Join(r.Params[:r.Required], ", ")
	if r.Required == len(r.Params) {
		return req
	}
	opt := strings.Join(r.Params[r.Required:], ", ")
	if req == "" {
		return "[" + opt + "]"
	}
	return req + "[, " + opt + "]"
}

// Prompt is the chat a model answers for obs: the system message for the
// action set and a user message with the goal, the page and the memory.
func Prompt(obs *eventspb.Observation, o PromptOptions) []Message {
	o = o.withDefaults()
	return []Message{{Role: "system", Content: System(o.Set, o.Answer)}, {Role: "user", Content: User(obs, o)}}
}

// User is the prompt's user message for obs.
func User(obs *eventspb.Observation, o PromptOptions) string {
	o = o.withDefaults()
	var b strings.Builder
	fmt.Fprintf(&b, "Goal: %s\n", oneLine(obs.GetInstruction(), 4*o.MaxText))
	if u := pagePath(obs.GetUrl()); u != "" {
		fmt.Fprintf(&b, "Page: %s\n", u)
	}
	if mem := obs.GetMemory(); len(mem) > 0 {
		// The observation keeps its memory newest first; a reader wants
		// the episode in order. Older pages keep only their text (the
		// WebAgent-R1 compression: a past step is its action, not its
		// page).
		b.WriteString("Earlier steps:\n")
		for i := len(mem) - 1; i >= 0; i-- {
			b.WriteString(pastStep(mem[i], o))
		}
		for i := len(mem) - 1; i >= 0; i-- {
			if len(mem[i].GetPageText()) == 0 {
				continue
			}
			fmt.Fprintf(&b, "Text of the earlier page %s:\n", pagePath(mem[i].GetUrl()))
			for j, l := range mem[i].GetPageText() {
				if j == o.MaxPageText {
					break
				}
				fmt.Fprintf(&b, "  %s\n", oneLine(l, o.MaxText))
			}
		}
	}
	b.WriteString("Elements:\n")
	els := obs.GetElements()
	for i, e := range els {
		if i == o.MaxElements {
			fmt.Fprintf(&b, "(and %d more)\n", len(els)-i)
			break
		}
		b.WriteString(element(e, o))
	}
	if len(els) == 0 {
		b.WriteString("(none)\n")
	}
	if pt := obs.GetPageText(); len(pt) > 0 {
		b.WriteString("Text on the page:\n")
		for i, l := range pt {
			if i == o.MaxPageText {
				break
			}
			fmt.Fprintf(&b, "  %s\n", oneLine(l, o.MaxText))
		}
	}
	b.WriteString("Your action:")
	return b.String()
}

// element is one line of the page: [bid] role "text", its state, and its
// centre (for the point actions).
func element(e *eventspb.Element, o PromptOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s", e.GetBid(), cmp.Or(e.GetRole(), "element"))
	if t := oneLine(e.GetText(), o.MaxText); t != "" {
		b.WriteString(" " + strconv.Quote(t))
	}
	if v := e.GetValue(); v != "" {
		b.WriteString(" value=" + strconv.Quote(oneLine(v, o.MaxText)))
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{e.GetChecked(), "checked"}, {e.GetFocused(), "focused"}, {e.GetDisabled(), "disabled"}} {
		if f.on {
			b.WriteString(" " + f.name)
		}
	}
	if len(e.GetOptions()) > 0 {
		b.WriteString(" options=" + quoteList(e.GetOptions(), o.MaxText))
	}
	if len(e.GetSelected()) > 0 {
		b.WriteString(" selected=" + quoteList(e.GetSelected(), o.MaxText))
	}
	if id := e.GetDomId(); id != "" && o.Set == action.SetBidCoord {
		b.WriteString(" id=" + strconv.Quote(oneLine(id, o.MaxText)))
	}
	if bx := e.GetBox(); bx != nil && o.Set == action.SetBidCoord {
		fmt.Fprintf(&b, " at (%d, %d)", int(bx.GetX()+bx.GetW()/2), int(bx.GetY()+bx.GetH()/2))
	}
	b.WriteByte('\n')
	return b.String()
}

// pastStep is one remembered step: its action on its target, what it
// typed, and its reward.
func pastStep(p *eventspb.PastStep, o PromptOptions) string {
	name := strings.ToLower(strings.TrimPrefix(p.GetType().String(), "ACTION_TYPE_"))
	if r, ok := action.ByType(p.GetType()); ok {
		name = string(r.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  step %d: %s", p.GetStep(), name)
	if t := oneLine(p.GetTargetText(), o.MaxText); t != "" {
		b.WriteString(" on " + strconv.Quote(t))
	}
	if t := oneLine(p.GetText(), o.MaxText); t != "" {
		b.WriteString(" with " + strconv.Quote(t))
	}
	fmt.Fprintf(&b, ", reward %s\n", strconv.FormatFloat(float64(p.GetReward()), 'g', 3, 32))
	return b.String()
}

// pagePath is a URL without its scheme and host (every task page is on
// the env's one origin; the path says which page of a task it is).
func pagePath(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		if j := strings.IndexByte(u, '/'); j >= 0 {
			u = u[j:]
		} else {
			u = "/"
		}
	}
	return u
}

// oneLine folds whitespace runs to one space and clips to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

func quoteList(xs []string, n int) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(oneLine(x, n))
	}
	return "[" + strings.Join(q, ", ") + "]"
}
