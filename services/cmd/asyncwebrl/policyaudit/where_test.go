package policyaudit

import (
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// TestWhereIs names where a value a step types occurs on the page as the
// policy sees it: that is where a copy mechanism must find it.
func TestWhereIs(t *testing.T) {
	ev := &eventspb.Observation{
		Instruction: "Sign up as jane_doe with the email jane@x.org",
		Elements: []*eventspb.Element{
			{Bid: "1", Text: "Submit"},
			{Bid: "2", Value: "77"},
			{Bid: "3", Options: []string{"Red", "Blue"}},
			{Bid: "4", Context: "Code: AB-12"},
		},
		PageText: []string{"Office B-204"},
		Memory:   []*eventspb.PastStep{{Url: "/p/7", PageText: []string{"Phone 555-0142"}}},
	}
	for text, want := range map[string]string{
		"jane_doe": "in the instruction",
		"submit":   "in an element's text",
		"77":       "in an element's value",
		"Blue":     "in an element's options",
		"AB-12":    "in an element's context",
		"b-204":    "in the page's text",
		"555-0142": "in an earlier page's text",
		"zed":      "nowhere the policy sees",
		" ":        "empty",
	} {
		if got := whereIs(ev, text); got != want {
			t.Errorf("whereIs(%q) = %q, want %q", text, got, want)
		}
	}
}
