package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestArchitectureJSONRoundTrip(t *testing.T) {
	a := DefaultArchitecture()
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := a.JSON()
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseArchitecture(s)
	if err != nil {
		t.Fatal(err)
	}
	if !b.SameShapes(&a) {
		t.Fatal("architecture changed through JSON")
	}
	// The JSON documents the graph's inputs and outputs for other readers.
	var doc struct {
		Inputs  []TensorSpec `json:"inputs"`
		Outputs []TensorSpec `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(s), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Inputs) != 15 || len(doc.Outputs) != 6 || doc.Outputs[2].Name != OutCandLogits || doc.Outputs[4].Name != OutPointLogits || doc.Outputs[5].Name != OutPointOffsets {
		t.Fatalf("inputs %v outputs %v", doc.Inputs, doc.Outputs)
	}
}

func TestArchitectureValidateRejects(t *testing.T) {
	for name, mutate := range map[string]func(*Architecture){
		"no NOOP":       func(a *Architecture) { a.ActionTypes = []string{"CLICK"} },
		"GOTO":          func(a *Architecture) { a.ActionTypes = append(a.ActionTypes, "GOTO") },
		"duplicate":     func(a *Architecture) { a.ActionTypes = append(a.ActionTypes, "CLICK") },
		"odd frame":     func(a *Architecture) { a.FrameHeight = 30 },
		"zero elements": func(a *Architecture) { a.MaxElements = 0 },
		"tiny vocab":    func(a *Architecture) { a.Vocab = 1 },
		"opset 18":      func(a *Architecture) { a.Opset = 18 },
		"features v0":   func(a *Architecture) { a.FeaturesVersion = 0 },
	} {
		a := DefaultArchitecture()
		mutate(&a)
		if err := a.Validate(); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if _, err := ParseArchitecture(`{"name":"other"}`); err == nil || !strings.Contains(err.Error(), "other") {
		t.Fatalf("foreign architecture: %v", err)
	}
}
