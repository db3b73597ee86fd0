package env

import (
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"reflect"
	"strings"
	"testing"
)

func TestParseAction(t *testing.T) {
	cases := []struct {
		in   string
		want Action
	}{
		{`click("12")`, Action{Type: Click, BID: "12"}},
		{` click( '12' ) `, Action{Type: Click, BID: "12"}},
		{`click("a7", button="left")`, Action{Type: Click, BID: "a7"}},
		{`fill("7", "hello")`, Action{Type: Fill, BID: "7", Text: "hello"}},
		{`fill(bid="7", value="it's \"q\"\n")`, Action{Type: Fill, BID: "7", Text: "it's \"q\"\n"}},
		{`fill('7', 'it\'s "q"')`, Action{Type: Fill, BID: "7", Text: `it's "q"`}},
		{`fill("7", "")`, Action{Type: Fill, BID: "7"}},
		{`select_option("3", "blue")`, Action{Type: SelectOption, BID: "3", Options: []string{"blue"}}},
		{`select_option("3", ["a", 'b',])`, Action{Type: SelectOption, BID: "3", Options: []string{"a", "b"}}},
		{`scroll(0, 200)`, Action{Type: Scroll, DY: 200}},
		{`scroll(-10.5, 3e2)`, Action{Type: Scroll, DX: -10.5, DY: 300}},
		{`press("Enter")`, Action{Type: Press, Key: "Enter"}},
		{`press("7", "Control+a")`, Action{Type: Press, BID: "7", Key: "Control+a"}},
		{`press(key_comb="+")`, Action{Type: Press, Key: "+"}},
		{`goto("/t/x/y/")`, Action{Type: Goto, URL: "/t/x/y/"}},
		{`go_back()`, Action{Type: GoBack}},
		{`noop()`, Action{Type: Noop, WaitMS: DefaultNoopWait}},
		{`noop(250)`, Action{Type: Noop, WaitMS: 250}},
		{`send_msg_to_user("done: +1 555 0101")`, Action{Type: SendMsg, Text: "done: +1 555 0101"}},
		{`send_msg_to_user("\u00e9t\u00e9")`, Action{Type: SendMsg, Text: "été"}},
	}
	for _, c := range cases {
		got, err := ParseAction(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.in, got, c.want)
		}
		back, err := ParseAction(got.String())
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Errorf("%s: round trip via %s gave %+v, %v", c.in, got.String(), back, err)
		}
	}
}

func TestParseActionRejects(t *testing.T) {
	bad := map[string]string{
		``:                           "action name",
		`click`:                      "want (",
		`click(`:                     "end of the action",
		`click("12"`:                 "want , or )",
		`click("12") extra`:          "unexpected text",
		`click(12)`:                  "must be a string",
		`click("")`:                  "bad bid",
		`click("a b")`:               "bad bid",
		`click("1", button="right")`: "left button",
		`click("1", x="2")`:          "no argument",
		`click(bid="1", bid="2")`:    "given twice",
		`fill("1")`:                  "needs the argument value",
		`fill("1", "unterminated)`:   "unterminated",
		`fill("1", "bad \q escape")`: "bad string",
		`drag("1", "2")`:             "unknown action",
		`scroll(0)`:                  "needs the argument delta_y",
		`scroll(0, 1e9)`:             "must be a number",
		`scroll(0, NaN)`:             "want a string",
		`select_option("1", [])`:     "no option",
		`select_option("1", [1])`:    "want a string in the list",
		`press("Hyperspace")`:        "unknown key",
		`press("Wiggle+a")`:          "unknown modifier",
		`goto("")`:                   "empty url",
		`noop(1.5)`:                  "whole number",
		`noop(-1)`:                   "must be a number",
		`CLICK("1")`:                 "unknown action",
	}
	for in, want := range bad {
		if _, err := ParseAction(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one mentioning %q", in, err, want)
		}
	}
	if _, err := ParseAction(`send_msg_to_user("` + strings.Repeat("x", action.MaxLen) + `")`); err == nil {
		t.Error("an oversized action was accepted")
	}
}

func TestKeyCombos(t *testing.T) {
	cases := []struct {
		in        string
		key, code string
		vk        int64
		mods      int64
		typesText bool
	}{
		{"Enter", "Enter", "Enter", 13, 0, true},
		{"a", "a", "KeyA", 65, 0, true},
		{"A", "A", "KeyA", 65, modShift, true},
		{"Tab", "Tab", "Tab", 9, 0, false},
		{"ArrowLeft", "ArrowLeft", "ArrowLeft", 37, 0, false},
		{"Control+a", "a", "KeyA", 65, modCtrl, false},
		{"Shift+Tab", "Tab", "Tab", 9, modShift, false},
		{"Space", " ", "Space", 32, 0, true},
	}
	for _, c := range cases {
		k, err := parseKeyCombo(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		evs := k.events()
		down := evs[0]
		if down.Key != c.key || down.Code != c.code || down.WindowsVirtualKeyCode != c.vk || down.Modifiers != c.mods || (down.Text != "") != c.typesText {
			t.Errorf("%s: got %+v", c.in, down)
		}
		if len(evs) != 2 || evs[1].Type != "keyUp" {
			t.Errorf("%s: events %+v", c.in, evs)
		}
	}
}

// FuzzParseAction: the parser never panics, and whatever it accepts formats
// back (String) to a string that parses to the same action.
func FuzzParseAction(f *testing.F) {
	for _, s := range []string{
		`click("12")`, `fill("7", "hello")`, `fill('7', 'it\'s')`, `select_option("3", ["a", "b"])`,
		`scroll(0, -200.5)`, `press("7", "Control+Shift+a")`, `press("+")`, `goto("http://127.0.0.1/x")`,
		`go_back()`, `noop(10)`, `send_msg_to_user("\xff\u00e9")`, `click(bid="1", button="left",)`, `fill("1", "\U0001F600")`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAction(s)
		if err != nil {
			return
		}
		back, err := ParseAction(a.String())
		if err != nil {
			t.Fatalf("%q parsed to %+v, whose form %q does not parse: %v", s, a, a.String(), err)
		}
		if !reflect.DeepEqual(a, back) {
			t.Fatalf("%q: %+v formats as %q, which parses to %+v", s, a, a.String(), back)
		}
	})
}
