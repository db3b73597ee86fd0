package actor

import (
	"slices"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// TestMemory holds Observation.memory to its rules: the last k steps,
// newest first, each with its target's text, its value, its page and its
// reward; page text on the newest step of each page at another URL than
// the current one's and than every newer step's, for at most two pages.
func TestMemory(t *testing.T) {
	page := func(url string, lines ...string) *eventspb.Observation {
		return &eventspb.Observation{Url: url, PageText: lines, Elements: []*eventspb.Element{
			{Bid: "1", Text: "Phone"}, {Bid: "2", Text: "Send", Value: ""},
		}}
	}
	click := &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: "2"}
	fill := &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_FILL, Bid: "1", Text: "555-0142"}

	m := NewMemory(3)
	ev := &eventspb.Observation{Url: "/a"}
	m.Recall(ev)
	if ev.Memory != nil {
		t.Fatalf("a new episode remembers %v", ev.Memory)
	}
	m.Remember(0, click, page("/a", "Home"), 0.1)
	m.Remember(1, click, page("/b", "Bo Chen", "Phone 555-0142"), 0.2)
	report := page("/c", "Report")
	report.Elements[0].Value = "555-0142"
	m.Remember(2, fill, report, 0.3)
	m.Remember(3, click, page("/c", "Report"), -0.1)

	ev = &eventspb.Observation{Url: "/c"}
	m.Recall(ev)
	var steps []uint32
	for _, st := range ev.Memory {
		steps = append(steps, st.GetStep())
	}
	if !slices.Equal(steps, []uint32{3, 2, 1}) {
		t.Fatalf("steps %v, want the last 3 newest first", steps)
	}
	if st := ev.Memory[1]; st.GetTargetText() != "Phone" || st.GetText() != "555-0142" || st.GetUrl() != "/c" || st.GetReward() != 0.3 || st.GetType() != eventspb.ActionType_ACTION_TYPE_FILL {
		t.Errorf("step 2 remembered as %v", st)
	}
	// /c is the current page: no text; /b's newest step carries its text.
	for i, want := range [][]string{nil, nil, {"Bo Chen", "Phone 555-0142"}} {
		if got := ev.Memory[i].GetPageText(); !slices.Equal(got, want) {
			t.Errorf("memory[%d] page text %q, want %q", i, got, want)
		}
	}

	// From another page, /c's newest step carries /c's text (with the value
	// typed there, which no line holds) and /b's too; at most two pages.
	m = NewMemory(4)
	m.Remember(0, click, page("/a", "Home"), 0)
	m.Remember(1, click, page("/b", "Bo Chen"), 0)
	m.Remember(2, fill, report, 0)
	ev = &eventspb.Observation{Url: "/d"}
	m.Recall(ev)
	want := [][]string{{"Report", "555-0142"}, {"Bo Chen"}, nil}
	for i := range want {
		if got := ev.Memory[i].GetPageText(); !slices.Equal(got, want[i]) {
			t.Errorf("memory[%d] page text %q, want %q", i, got, want[i])
		}
	}

	// k = 0 and a nil memory remember nothing.
	for _, m := range []*Memory{NewMemory(0), nil} {
		m.Remember(0, click, page("/a"), 0)
		ev := &eventspb.Observation{}
		m.Recall(ev)
		if ev.Memory != nil {
			t.Errorf("memory off remembers %v", ev.Memory)
		}
	}
}
