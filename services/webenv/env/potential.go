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
//     such a field;
//   - choosing: the checkboxes and radio buttons whose label is a run of the
//     instruction's words, and a select one of whose options is, are the
//     named controls; (named ones ticked or selected − others ticked) over
//     the named ones, clipped to [0, 1] (click-checkboxes, click-option,
//     choose-list).
//
// A page with neither part has potential 0 throughout.
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
	phrases := instruction.QuotedPhrases(obs.Instruction)
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
