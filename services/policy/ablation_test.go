package policy

import (
	"slices"
	"testing"
)

// An ablation zeroes its inputs and nothing else: the vision ablation the
// frame and the colour columns, the task-specific one its columns and the
// derived values.
func TestAblations(t *testing.T) {
	if _, err := ParseAblations("vision,nope"); err == nil {
		t.Fatal("an unknown ablation was accepted")
	}
	if got, err := ParseAblations(" vision, task-specific,vision"); err != nil || !slices.Equal(got, []Ablation{AblateVision, AblateTaskSpecific}) {
		t.Fatalf("ParseAblations = %v, %v", got, err)
	}
	obs := clickButtonObs(t)
	obs.Instruction = `Type "Yes" in all upper case letters.`
	obs.PageText = []string{"2 + 3 ="}
	featurize := func(x ...Ablation) *Features {
		t.Helper()
		a := DefaultArchitecture()
		a.Ablations = x
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		f, err := a.Featurize(obs)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	full, vision, task := featurize(), featurize(AblateVision), featurize(AblateTaskSpecific)
	nonzero := func(xs []float32) bool { return slices.ContainsFunc(xs, func(v float32) bool { return v != 0 }) }
	if !nonzero(full.Frame) || nonzero(vision.Frame) || !nonzero(task.Frame) {
		t.Fatal("only the vision ablation zeroes the frame")
	}
	F := len(elementFeatureNames)
	for c, name := range elementFeatureNames {
		offV := slices.Contains(visionColumns, name)
		offT := slices.Contains(taskSpecificColumns, name)
		for e := range full.BIDs {
			v, fv, ft := full.ElemFeats[e*F+c], vision.ElemFeats[e*F+c], task.ElemFeats[e*F+c]
			if (offV && fv != 0) || (!offV && fv != v) || (offT && ft != 0) || (!offT && ft != v) {
				t.Errorf("element %d column %s: full %v, vision %v, task-specific %v", e, name, v, fv, ft)
			}
		}
	}
	// Something was there to zero: the red button's colour.
	if r := slices.Index(elementFeatureNames, "mean_r"); full.ElemFeats[1*F+r] == 0 {
		t.Fatal("the red button has no mean_r to ablate")
	}
	for _, d := range []string{"yes", "YES", "5"} {
		if !slices.Contains(full.Candidates, d) || slices.Contains(task.Candidates, d) {
			t.Errorf("derived value %q: in the full candidates %v, in the ablated %v", d, slices.Contains(full.Candidates, d), slices.Contains(task.Candidates, d))
		}
	}
	bad := DefaultArchitecture()
	bad.Ablations = []Ablation{"colour"}
	if err := bad.Validate(); err == nil {
		t.Fatal("an architecture with an unknown ablation validated")
	}
	// The actors featurize as the learner trained: the ablations travel
	// with the weights.
	a := DefaultArchitecture()
	a.Ablations = []Ablation{AblateTaskSpecific}
	onnx, err := InitialONNX(a)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := ReadArchitecture(onnx); err != nil || !slices.Equal(back.Ablations, a.Ablations) {
		t.Fatalf("read back ablations %v (%v), want %v", back.Ablations, err, a.Ablations)
	}
}
