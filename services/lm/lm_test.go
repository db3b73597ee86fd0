package lm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
)

// page is a login page with the memory of one earlier page.
func page() *eventspb.Observation {
	return &eventspb.Observation{
		Url:         "http://127.0.0.1:18080/miniwob/login-user.html?seed=7",
		Instruction: `Enter the username "kanesha" and the password "x_9b" into the text fields and press login.`,
		Width:       160, Height: 210,
		Elements: []*eventspb.Element{
			{Bid: "3", Role: "textbox", Text: "Username", Value: "kanesha", Focused: true, Box: &eventspb.Box{X: 10, Y: 60, W: 100, H: 20}},
			{Bid: "4", Role: "textbox", Text: "Password", Box: &eventspb.Box{X: 10, Y: 90, W: 100, H: 20}},
			{Bid: "5", Role: "button", Text: "Login", Box: &eventspb.Box{X: 10, Y: 120, W: 40, H: 20}},
			{Bid: "6", Role: "checkbox", Text: "remember\nme", Checked: true, DomId: "rem", Box: &eventspb.Box{X: 60, Y: 120, W: 12, H: 12}},
			{Bid: "7", Role: "combobox", Options: []string{"red", "blue"}, Selected: []string{"blue"}, Disabled: true},
		},
		PageText: []string{"Welcome   back", "Code: 4411"},
		Memory: []*eventspb.PastStep{
			{Step: 2, Type: eventspb.ActionType_ACTION_TYPE_FILL, TargetText: "Username", Text: "kanesha", Url: "http://127.0.0.1:18080/miniwob/login-user.html?seed=7", Reward: -0.01},
			{Step: 1, Type: eventspb.ActionType_ACTION_TYPE_CLICK, TargetText: "Next", Url: "http://127.0.0.1:18080/start", Reward: 0, PageText: []string{"Your code is 4411"}},
		},
	}
}

// TestPrompt: what a model reads, per action set and bound (golden).
func TestPrompt(t *testing.T) {
	datadriven.RunTest(t, "testdata/prompt.txt", func(t *testing.T, d *datadriven.TestData) string {
		o := PromptOptions{}
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "set":
				o.Set = action.Set(a.Vals[0])
			case "elements":
				fmt.Sscan(a.Vals[0], &o.MaxElements)
			case "answer":
				o.Answer = Answer(a.Vals[0])
			}
		}
		obs := page()
		switch d.Cmd {
		case "prompt":
		case "prompt-empty":
			obs = &eventspb.Observation{Instruction: "Click the button."}
		case "grammar":
			var avoid []*eventspb.Action
			if d.HasArg("avoid") {
				avoid = append(avoid, &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: "5"},
					&eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_FILL, Bid: "3", Text: "x"})
			}
			return Grammar(obs, o.Set, o.withDefaults().Answer, avoid...)
		default:
			d.Fatalf(t, "unknown command %s", d.Cmd)
		}
		var b strings.Builder
		for _, m := range Prompt(obs, o) {
			fmt.Fprintf(&b, "--- %s\n%s\n", m.Role, m.Content)
		}
		return b.String()
	})
}

// TestParseReply: the one action a reply names, or why it names none
// (golden: a line of reply per input line, \n for a newline in a reply).
func TestParseReply(t *testing.T) {
	datadriven.RunTest(t, "testdata/reply.txt", func(t *testing.T, d *datadriven.TestData) string {
		set := action.SetBidCoord
		if d.HasArg("bid") {
			set = action.SetBid
		}
		var b strings.Builder
		for _, line := range strings.Split(strings.TrimRight(d.Input, "\n"), "\n") {
			reply := strings.ReplaceAll(line, `\n`, "\n")
			a, err := ParseReply(reply, page(), set)
			if err != nil {
				fmt.Fprintf(&b, "%s\n  error: %v\n", line, err)
				if _, ok := err.(*InvalidError); !ok {
					t.Errorf("%q: %T, want *InvalidError", line, err)
				}
				continue
			}
			fmt.Fprintf(&b, "%s\n  %s\n", line, a)
		}
		return b.String()
	})
}

// FuzzParseReply: no reply panics, and a reply that parses is an action
// of the set on one of the page's bids that the action table can carry.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{`click("5")`, "Action: `fill(\"4\", \"x_9b\")`", `mouse_click(40, 62)`, "click(click(\"5\"", `drag_and_drop("3", "9")`, "\x00(", ""} {
		f.Add(s)
	}
	obs := page()
	f.Fuzz(func(t *testing.T, reply string) {
		a, err := ParseReply(reply, obs, action.SetBidCoord)
		if err != nil {
			return
		}
		if a.BID != "" && !hasBID(obs, a.BID) {
			t.Fatalf("%q: bid %q not on the page", reply, a.BID)
		}
		if _, err := action.ToProto(a); err != nil {
			t.Fatalf("%q: %v", reply, err)
		}
	})
}

// TestParseReplyBounded: a reply made to cost many parse attempts is
// given up within the budget, not parsed to the end.
func TestParseReplyBounded(t *testing.T) {
	reply := strings.Repeat(`click("`, 2000) + strings.Repeat(")", 2000)
	if _, err := ParseReply(reply, page(), action.SetBidCoord); err == nil {
		t.Fatal("a reply of nested clicks parsed")
	}
}
