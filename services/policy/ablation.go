package policy

import (
	"slices"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/services/internal/enum"
)

// Ablation names a group of inputs a run turns off, to measure what they
// are worth (issue 37's generalisation protocol). It is part of the
// Architecture, so the actors featurize as the learner trained.
type Ablation string

const (
	// AblateVision zeroes the frame's thumbnail and the colour features:
	// whether the policy is "visual" is then measured, not claimed.
	AblateVision Ablation = "vision"
	// AblateTaskSpecific turns off the inputs each written for one task,
	// read off its failures (taskSpecificColumns, derived values).
	AblateTaskSpecific Ablation = "task-specific"
)

// Ablations are the known ablations, in the order flags list them.
var Ablations = []Ablation{AblateVision, AblateTaskSpecific}

// visionColumns are the element columns read off the frame's pixels.
var visionColumns = []string{"mean_r", "mean_g", "mean_b", "colour_named", "fill"}

// taskSpecificColumns are the element columns written for one MiniWoB++
// task, each found by reading that task's failed episodes back
// (CHANGELOG.md): ordinal (focus-text-2), names_other (identify-shape),
// id_is_value (grid-coordinate), choices_made (choose-list and
// click-option), colour_named (click-color). The derived values
// (enter-text-2, simple-arithmetic, simple-algebra) go with them.
var taskSpecificColumns = []string{"ordinal", "names_other", "id_is_value", "choices_made", "colour_named"}

// ParseAblations reads a comma list of ablations ("" is none).
func ParseAblations(s string) ([]Ablation, error) {
	var out []Ablation
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		x, err := enum.Parse("ablation", f, Ablations...)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out, nil
}

// ablates reports whether the architecture turns x off.
func (a *Architecture) ablates(x Ablation) bool { return slices.Contains(a.Ablations, x) }

// ablate is Featurize's last stage: it zeroes what the architecture's
// ablations turn off. The derived values are left out earlier, in the
// candidates stage.
func (z *featurizer) ablate() {
	a, f := z.a, z.f
	var cols []string
	if a.ablates(AblateVision) {
		clear(f.Frame)
		cols = append(cols, visionColumns...)
	}
	if a.ablates(AblateTaskSpecific) {
		cols = append(cols, taskSpecificColumns...)
	}
	F := len(elementFeatureNames)
	for _, name := range cols {
		c := slices.Index(elementFeatureNames, name)
		for e := 0; e*F+c < len(f.ElemFeats); e++ {
			f.ElemFeats[e*F+c] = 0
		}
	}
}
