package policy

import (
	"slices"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/instruction"
)

// hintNamed says how the instruction names an element by what it is rather
// than by its text (its tag, input type or class names, Element.hint): 1
// when a hint word is a word of a quoted value (`click on the "Like"
// button` names <span class="like">; `a "textarea" widget` names a
// textarea), 0.5 when it is another instruction word that is not a
// stopword ("the 1st input textbox" names the inputs), else 0.
func hintNamed(hint []string, quotes [][]string, instr map[string]bool) float32 {
	var v float32
	for _, h := range hint {
		for _, q := range quotes {
			for _, w := range q {
				if w == h {
					return 1
				}
			}
		}
		if instr[h] && !instruction.IsStopword(h) {
			v = 0.5
		}
	}
	return v
}

// contextMatch is the share of the instruction's content words (not
// stopwords, not already the element's own text or hint) that the text
// around the element holds (Element.context): the tweet that names the
// asked user, around a reply button that has no text of its own.
func contextMatch(instr, own, hint, context []string) float32 {
	if len(context) == 0 {
		return 0
	}
	skip := make(map[string]bool, len(own)+len(hint))
	for _, w := range own {
		skip[w] = true
	}
	for _, w := range hint {
		skip[w] = true
	}
	in := make(map[string]bool, len(context))
	for _, w := range context {
		in[w] = true
	}
	seen := map[string]bool{}
	var n, hit int
	for _, w := range instr {
		if instruction.IsStopword(w) || skip[w] || seen[w] {
			continue
		}
		seen[w] = true
		n++
		if in[w] {
			hit++
		}
	}
	if n == 0 {
		return 0
	}
	return float32(hit) / float32(n)
}

// roleRanks numbers each element among those of its role class, 1-based
// in document order (the order the actor lists them): the rank an ordinal
// in the instruction ("the 2nd textbox") refers to.
func roleRanks(els []*eventspb.Element) map[*eventspb.Element]int {
	var seen [numRoles]int
	out := make(map[*eventspb.Element]int, len(els))
	for _, el := range els {
		rc := roleClass(el.GetRole())
		seen[rc]++
		out[el] = seen[rc]
	}
	return out
}

// genericHints are hint words every page is made of: they name no kind of
// thing a reader would ask for.
var genericHints = map[string]bool{
	"div": true, "span": true, "a": true, "p": true, "li": true, "ul": true, "td": true, "tr": true, "svg": true,
	"g": true, "label": true, "input": true, "text": true, "button": true, "ui": true, "widget": true,
}

// hintKinds counts, over the kept elements' hint words, the non-generic
// ones: the kinds of thing the page shows (circle, polygon, triangle, ...).
func hintKinds(hints [][]string) map[string]int {
	out := map[string]int{}
	for _, hw := range hints {
		seen := map[string]bool{}
		for _, w := range hw {
			if !genericHints[w] && !seen[w] {
				seen[w] = true
				out[w]++
			}
		}
	}
	return out
}

// namesOther is 1 when the element's text names the kind of another
// element on the page: the "Circle" button beside the figure drawn as an
// SVG circle (MiniWoB++'s identify-shape asks which button describes it).
func namesOther(text, hint []string, kinds map[string]int) float32 {
	for _, w := range text {
		n := kinds[w]
		if n > 0 && slices.Contains(hint, w) {
			n-- // the element's own kind does not count
		}
		if n > 0 {
			return 1
		}
	}
	return 0
}
