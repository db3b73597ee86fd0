package lm

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
)

// Language is the set of one-line answers a page admits: each action of
// the set with its arguments, an element argument one of the page's bids
// (a fill's a text field's, a select's a select's), a select's option one
// of its options, strings without quotes or backslashes of at most 80
// characters, numbers of at most 4 digits. Grammar writes it as GBNF for a
// server; Prefix and Complete decide it a character at a time for the
// in-process model's constrained decoding. It is written once here, so
// that both agree.
type Language struct {
	alts [][]part
}

// partKind is what one part of an answer is.
type partKind int

const (
	partLit    partKind = iota // exactly lits[0]
	partChoice                 // one of lits
	partStr                    // "…" of at most maxGrammarText characters, no quote, backslash or control
	partText                   // partStr of at least one character (keyboard_type's text)
	partKey                    // "…" of 1..24 of [A-Za-z0-9+]
	partNum                    // 1..4 digits
	partInt                    // "-"? 1..4 digits
)

type part struct {
	kind partKind
	lits []string
}

// NewLanguage is the language of obs's page with action set s in answer
// form a, less the element actions of avoid (a greedy episode's actions
// already taken from this page state: a click, double click or hover of
// the same bid). In AnswerTarget form an element action is one
// alternative per element, its comment line and its bid written out
// together, so that the comment the model wrote decides the bid.
func NewLanguage(obs *eventspb.Observation, s action.Set, a Answer, avoid ...*eventspb.Action) *Language {
	l := &Language{}
	lit := func(x string) part { return part{kind: partLit, lits: []string{x}} }
	quoted := func(xs []string) part {
		q := make([]string, len(xs))
		for i, x := range xs {
			q[i] = strconv.Quote(x)
		}
		return part{kind: partChoice, lits: q}
	}
	bidsOf := func(roles []string) []string {
		var out []string
		for _, e := range obs.GetElements() {
			if e.GetBid() != "" && (len(roles) == 0 || slices.Contains(roles, e.GetRole())) && !slices.Contains(out, e.GetBid()) {
				out = append(out, e.GetBid())
			}
		}
		return out
	}
	targets := map[string]string{} // quoted bid, as a call writes it: its comment line (AnswerTarget)
	if a == AnswerTarget {
		for _, e := range obs.GetElements() {
			if q := strconv.Quote(e.GetBid()); e.GetBid() != "" && targets[q] == "" {
				targets[q] = targetLine(e)
			}
		}
	}
	for _, t := range s.Types() {
		r, _ := action.ByType(t)
		call := func(args ...part) {
			alt := []part{lit(string(r.Name) + "(")}
			for i, a := range args {
				if i > 0 {
					alt = append(alt, lit(", "))
				}
				alt = append(alt, a)
			}
			alt = append(alt, lit(")"))
			if a != AnswerTarget || r.Target != action.TargetElement {
				l.alts = append(l.alts, alt)
				return
			}
			// One alternative per bid, its comment before the call.
			for _, bid := range args[0].lits {
				el := slices.Clone(alt)
				el[0], el[1] = lit(targets[bid]+string(r.Name)+"("), lit(bid)
				l.alts = append(l.alts, el)
			}
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
		str, text, num, integer, key := part{kind: partStr}, part{kind: partText}, part{kind: partNum}, part{kind: partInt}, part{kind: partKey}
		switch r.Name {
		case action.Noop, action.GoBack:
			call()
		case action.Click, action.DblClick, action.Hover:
			call(quoted(bids))
		case action.Fill:
			call(quoted(bids), str)
		case action.SelectOption:
			for _, e := range obs.GetElements() {
				if slices.Contains(bids, e.GetBid()) && len(e.GetOptions()) > 0 {
					call(quoted([]string{e.GetBid()}), quoted(e.GetOptions()))
				}
			}
		case action.Scroll:
			call(integer, integer)
		case action.Press:
			call(key)
		case action.SendMsg:
			call(str)
		case action.KeyboardType:
			call(text)
		case action.MouseClick, action.MouseMove:
			call(num, num)
		case action.MouseDragAndDrop:
			call(num, num, num, num)
		}
	}
	return l
}

// Grammar is the language in GBNF (llama.cpp's; vLLM and SGLang take it as
// guided_grammar).
func (l *Language) Grammar() string {
	alts := make([]string, len(l.alts))
	for i, alt := range l.alts {
		ps := make([]string, len(alt))
		for j, p := range alt {
			switch p.kind {
			case partLit:
				ps[j] = gbnfString(p.lits[0])
			case partChoice:
				q := make([]string, len(p.lits))
				for k, x := range p.lits {
					q[k] = gbnfString(x)
				}
				ps[j] = "(" + strings.Join(q, " | ") + ")"
			case partStr:
				ps[j] = "str"
			case partText:
				ps[j] = "text"
			case partKey:
				ps[j] = "key"
			case partNum:
				ps[j] = "num"
			case partInt:
				ps[j] = "int"
			}
		}
		alts[i] = strings.Join(ps, " ")
	}
	return "root ::= " + strings.Join(alts, " | ") + "\n" +
		`str ::= "\"" [^"\\\x00-\x1f]{0,` + strconv.Itoa(maxGrammarText) + `} "\""` + "\n" +
		`text ::= "\"" [^"\\\x00-\x1f]{1,` + strconv.Itoa(maxGrammarText) + `} "\""` + "\n" +
		`key ::= "\"" [A-Za-z0-9+]{1,24} "\""` + "\n" +
		"num ::= [0-9]{1,4}\n" +
		`int ::= "-"? [0-9]{1,4}` + "\n"
}

// Prefix reports whether s begins some answer of the language (the empty
// string does).
func (l *Language) Prefix(s string) bool {
	for _, alt := range l.alts {
		if r := matchParts(alt, s); r == matchPrefix || r == matchFull {
			return true
		}
	}
	return false
}

// Complete reports whether s is an answer of the language.
func (l *Language) Complete(s string) bool {
	for _, alt := range l.alts {
		if matchParts(alt, s) == matchFull {
			return true
		}
	}
	return false
}

// FreeText reports whether answer prefix s ends inside free text (a
// fill's or a message's string, a key) in every alternative it begins,
// rather than in the answer's structure (the action, the element, its
// comment, an option): the tokens where sampling at a temperature above 1
// spreads the choice of what to do, and past which it only garbles text
// (12-08: at 2, 10% of a run's first answers wrote strings until the
// length bound cut them). Decoder.PickFrom draws free text at 1.
func (l *Language) FreeText(s string) bool {
	free := false
	for _, alt := range l.alts {
		f, other := endsIn(alt, s)
		if other {
			return false
		}
		free = free || f
	}
	return free
}

// endsIn is where s, matched against parts in order, ends: inside a free
// text part (free) or anywhere else, a complete answer included (other),
// over every way the parts can match.
func endsIn(parts []part, s string) (free, other bool) {
	if len(parts) == 0 {
		return false, s == ""
	}
	for _, end := range partEnds(parts[0], s) {
		if end.prefix {
			switch parts[0].kind {
			case partStr, partText, partKey:
				free = true
			default:
				other = true
			}
			continue
		}
		f, o := endsIn(parts[1:], s[end.n:])
		free, other = free || f, other || o
	}
	return free, other
}

type matchResult int

const (
	matchNone   matchResult = iota
	matchPrefix             // s ends inside the alternative
	matchFull               // s is the whole alternative
)

// matchParts matches s against the parts in order, trying every way a
// part can end (a number of 1 to 4 digits), so that a prefix is found
// whatever part it ends in.
func matchParts(parts []part, s string) matchResult {
	if len(parts) == 0 {
		if s == "" {
			return matchFull
		}
		return matchNone
	}
	best := matchNone
	for _, end := range partEnds(parts[0], s) {
		if end.prefix {
			best = max(best, matchPrefix)
			continue
		}
		best = max(best, matchParts(parts[1:], s[end.n:]))
		if best == matchFull {
			return best
		}
	}
	return best
}

// partEnd is one way part p matches the start of s: it consumes n bytes
// (prefix false), or s ends inside it (prefix true).
type partEnd struct {
	n      int
	prefix bool
}

func partEnds(p part, s string) []partEnd {
	var out []partEnd
	switch p.kind {
	case partLit, partChoice:
		for _, x := range p.lits {
			switch {
			case strings.HasPrefix(s, x):
				out = append(out, partEnd{n: len(x)})
			case strings.HasPrefix(x, s):
				out = append(out, partEnd{prefix: true})
			}
		}
	case partNum, partInt:
		i := 0
		if p.kind == partInt && strings.HasPrefix(s, "-") {
			i = 1
		}
		if i == len(s) {
			return []partEnd{{prefix: true}}
		}
		for d := 1; d <= 4 && i+d <= len(s) && s[i+d-1] >= '0' && s[i+d-1] <= '9'; d++ {
			if i+d == len(s) {
				out = append(out, partEnd{prefix: true})
			}
			out = append(out, partEnd{n: i + d})
		}
	case partStr, partText, partKey:
		if s == "" {
			return []partEnd{{prefix: true}}
		}
		if s[0] != '"' {
			return nil
		}
		n := 0
		body := s[1:]
		for i, r := range body {
			if r == utf8.RuneError {
				// A token may end inside a character: the rest of its
				// bytes may still come, but only at the very end (and
				// in free text: a key is ASCII); bytes that are no
				// UTF-8 never make an answer.
				if _, size := utf8.DecodeRuneInString(body[i:]); size == 1 {
					if p.kind != partKey && !utf8.FullRuneInString(body[i:]) {
						return []partEnd{{prefix: true}}
					}
					return nil
				}
			}
			if r == '"' {
				if p.kind != partStr && n == 0 {
					return nil
				}
				return []partEnd{{n: 1 + i + 1}}
			}
			if !strChar(p.kind, r) {
				return nil
			}
			if n++; n > map[partKind]int{partStr: maxGrammarText, partText: maxGrammarText, partKey: 24}[p.kind] {
				return nil
			}
		}
		return []partEnd{{prefix: true}}
	}
	return out
}

func strChar(k partKind, r rune) bool {
	if k == partKey {
		return r == '+' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return r != '"' && r != '\\' && r >= 0x20
}
