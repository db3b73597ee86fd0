package env

import (
	"slices"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/services/internal/instruction"
)

// instructionPotential is the progress of a page that scores itself only
// when its episode ends (a MiniWoB++ task: no rubric, one reward on
// submit): how far the page's form controls agree with what the
// instruction names, in [0, 1], the mean of the parts the page has:
//
//   - typing: half the share of the instruction's quoted phrases that some
//     text field holds as its whole value, half the share of the text fields
//     holding one (so enter-password's second field counts, and one phrase
//     typed into every field of login-user does not fill the form); a
//     phrase introduced by a word that a field's label holds counts only in
//     such a field; a phrase that is a button's or link's whole text names
//     what to click and is no value (click-button's distractor fields);
//   - choosing: the checkboxes and radio buttons whose label is a run of the
//     instruction's words, and a select one of whose options is, are the
//     named controls; (named ones ticked or selected − others ticked) over
//     the named ones, clipped to [0, 1] (click-checkboxes, click-option,
//     choose-list).
//
// A page with neither part that names what to click in quotes has the
// finding part instead (findingPotential): the named thing in view, in the
// context the instruction names. A page with none of the three has
// potential 0 throughout.
//
// It is the potential Φ of potential-based shaping (Ng, Harada and Russell,
// ICML 1999): the Progress term pays the change of Φ, and the episode's end
// sets it to 1 on success and 0 otherwise, so every failed episode gets the
// same shaping total (−Φ of its start, 0 on these pages) and the best policy
// is unchanged; what changes is that the step which types or ticks the
// right thing is paid when it happens instead of only at submit, which is
// what a policy from random init needs on the multi-step tasks (enter-text,
// login-user, click-checkboxes).
func instructionPotential(obs *Observation) float64 {
	if obs == nil {
		return 0
	}
	var parts []float64
	if p, ok := typingPotential(obs); ok {
		parts = append(parts, p)
	}
	if p, ok := choicePotential(obs); ok {
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		// Only where nothing is typed or chosen: beside those parts the
		// finding part would be constant on most pages (the named thing
		// in view from the start) and halve what they pay.
		if p, ok := findingPotential(obs); ok {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return 0
	}
	sum := 0.0
	for _, p := range parts {
		sum += p
	}
	return sum / float64(len(parts))
}

// typingPotential is the typing part: false without a quoted phrase or a
// text field.
func typingPotential(obs *Observation) (float64, bool) {
	// `Click on the "Next" button` beside a text field is no form to type
	// into: typing "Next" into the field was paid as half the form, and the
	// policy of the hour at 521c07d filled click-button's distractor fields
	// in most of its failed episodes.
	phrases := slices.DeleteFunc(instruction.QuotedPhrases(obs.Instruction), func(p string) bool {
		return namesControl(obs.Elements, p)
	})
	if len(phrases) == 0 {
		return 0, false
	}
	// A phrase whose introducing word names a field (`the password "UWH"`
	// beside a field labelled Password) counts only in that field: login-user
	// with its two values swapped is not half done.
	intro := make([]string, len(phrases))
	for i, p := range phrases {
		w := instruction.Introducer(obs.Instruction, p)
		for _, el := range obs.Elements {
			if w != "" && el.Role == "textbox" && slices.Contains(instruction.LowerWords(el.Text), w) {
				intro[i] = w
				break
			}
		}
	}
	held := make([]bool, len(phrases))
	fields, filled := 0, 0
	for _, el := range obs.Elements {
		if el.Role != "textbox" {
			continue
		}
		fields++
		v := strings.TrimSpace(el.Value)
		label := instruction.LowerWords(el.Text)
		match := false
		for i, p := range phrases {
			if v != "" && v == p && (intro[i] == "" || slices.Contains(label, intro[i])) {
				held[i], match = true, true
			}
		}
		if match {
			filled++
		}
	}
	if fields == 0 {
		return 0, false
	}
	n := 0
	for _, h := range held {
		if h {
			n++
		}
	}
	return 0.5*float64(n)/float64(len(phrases)) + 0.5*float64(filled)/float64(fields), true
}

// namesControl reports whether phrase is the whole text of a button or a
// link (the roles agent.js gives <button>, <a>, and role="tab"/"menuitem").
func namesControl(els []Element, phrase string) bool {
	p := instruction.LowerWords(phrase)
	for _, el := range els {
		switch el.Role {
		case "button", "link", "tab", "menuitem":
			if slices.Equal(instruction.LowerWords(el.Text), p) && len(p) > 0 {
				return true
			}
		}
	}
	return false
}

// choicePotential is the choosing part: false without a named control.
func choicePotential(obs *Observation) (float64, bool) {
	instr := instruction.LowerWords(obs.Instruction)
	named := func(s string) bool { return instruction.ContainsRun(instr, instruction.LowerWords(s)) }
	nNamed, good, bad := 0, 0, 0
	for _, el := range obs.Elements {
		switch el.Role {
		case "checkbox", "radio":
			isNamed := named(el.Text)
			if isNamed {
				nNamed++
			}
			switch {
			case el.Checked && isNamed:
				good++
			case el.Checked:
				bad++
			}
		case "combobox":
			for _, o := range el.Options {
				if named(o) {
					nNamed++
					if named(el.Value) {
						good++
					}
					break
				}
			}
		}
	}
	if nNamed == 0 {
		return 0, false
	}
	return min(1, max(0, float64(good-bad)/float64(nNamed))), true
}

// findingPotential is the finding part, for a page that asks to find and
// click something it names in quotes: 0.5 when an element whose text holds
// a quoted phrase is listed, 1 when the text around it (Element.Context)
// also holds one of the instruction's other content words, or when the
// instruction has none. `For the user @lorem, click on the "Share via DM"
// button` (social-media) is 0 until a tweet's menu is open, 0.5 with
// another tweet's menu open and 1 with @lorem's. What it pays for is the
// step that brings the named thing into view (a menu, a tab, a folder:
// social-media, click-tab-2, click-collapsible-2, navigate-tree); without
// it the only reward is the final click's, after a search that random
// clicks rarely finish (social-media, six of whose nine actions are in a
// menu: 0% on test seeds after 152 training episodes, 88% only after 226).
// A page that shows the named thing from the
// start has a constant potential, and shaping pays it nothing. false
// without a quoted phrase.
func findingPotential(obs *Observation) (float64, bool) {
	phrases := instruction.QuotedPhrases(obs.Instruction)
	if len(phrases) == 0 {
		return 0, false
	}
	rest := obs.Instruction
	quoted := make([][]string, len(phrases))
	for i, p := range phrases {
		rest = strings.Replace(rest, p, " ", 1)
		quoted[i] = instruction.LowerWords(p)
	}
	var qualifiers []string
	for _, w := range instruction.LowerWords(rest) {
		if !instruction.IsStopword(w) && !slices.Contains(qualifiers, w) {
			qualifiers = append(qualifiers, w)
		}
	}
	best := 0.0
	for _, el := range obs.Elements {
		text := instruction.LowerWords(el.Text)
		if !slices.ContainsFunc(quoted, func(q []string) bool { return instruction.ContainsRun(text, q) }) {
			continue
		}
		v := 0.5
		if len(qualifiers) == 0 {
			v = 1
		} else {
			ctx := instruction.LowerWords(el.Context)
			if slices.ContainsFunc(qualifiers, func(w string) bool { return slices.Contains(ctx, w) }) {
				v = 1
			}
		}
		best = max(best, v)
	}
	return best, true
}
