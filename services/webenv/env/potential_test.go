package env

import (
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

func TestInstructionPotential(t *testing.T) {
	login := `Enter the username "kanesha" and the password "UWH" into the text fields and press login.`
	field := func(v string) Element { return Element{Role: "textbox", Value: v} }
	named := func(label, v string) Element { return Element{Role: "textbox", Text: label, Value: v} }
	box := func(text string, checked bool) Element {
		return Element{Role: "checkbox", Text: text, Checked: checked}
	}
	radio := func(text string, checked bool) Element { return Element{Role: "radio", Text: text, Checked: checked} }
	button := Element{Role: "button", Text: "Submit"}
	boxes := `Select nYKs, 0EEvO and click Submit.`
	list := Element{Role: "combobox", Options: []string{"Kenya", "Heard Island and McDonald Islands", "Peru"}}
	selected := func(v string) Element { l := list; l.Value = v; return l }
	listInstr := `Select Heard Island and McDonald Islands from the list and click Submit.`
	social := `For the user @lorem, click on the "Share via DM" button.`
	more := func(user string) Element {
		return Element{Role: "clickable", Hint: "span more", Context: "Ida @" + user + " 3h ago"}
	}
	item := func(text, user string) Element {
		return Element{Role: "clickable", Text: text, Context: "Share via DM Copy link to Tweet Mute @" + user}
	}
	for _, tc := range []struct {
		name  string
		instr string
		els   []Element
		want  float64
	}{
		{"login: empty form", login, []Element{field(""), field(""), button}, 0},
		{"login: username typed", login, []Element{field("kanesha"), field(""), button}, 0.5*0.5 + 0.5*0.5},
		{"login: both typed", login, []Element{field("kanesha"), field("UWH"), button}, 1},
		{"login: swapped fields count as typed", login, []Element{field("UWH"), field("kanesha"), button}, 1},
		{"login: one phrase in both fields", login, []Element{field("kanesha"), field("kanesha"), button}, 0.5*0.5 + 0.5},
		{"login: labelled fields, right ones", login, []Element{named("Username", "kanesha"), named("Password", "UWH"), button}, 1},
		{"login: labelled fields, swapped", login, []Element{named("Username", "UWH"), named("Password", "kanesha"), button}, 0},
		{"login: labelled fields, one right", login, []Element{named("Username", "kanesha"), named("Password", ""), button}, 0.5*0.5 + 0.5*0.5},
		{"login: a wrong text", login, []Element{field("kanesh"), field(""), button}, 0},
		{"enter-password: first field", `Enter the password "x7" into both text fields and press submit.`,
			[]Element{field("x7"), field("")}, 0.5 + 0.25},
		{"enter-password: both fields", `Enter the password "x7" into both text fields and press submit.`,
			[]Element{field("x7"), field("x7")}, 1},
		{"no quoted phrase nor named control", `Click on the button.`, []Element{field("anything"), button}, 0},
		{"a quoted phrase but no text field: finding", `Click on the "OK" button.`, []Element{{Role: "button", Text: "OK"}}, 1},
		{"finding: the named thing not in view", social, []Element{more("lorem"), more("ipsum")}, 0},
		{"finding: another tweet's menu open", social, []Element{more("lorem"), more("ipsum"), item("Share via DM", "ipsum")}, 0.5},
		{"finding: the asked user's menu open", social, []Element{more("lorem"), more("ipsum"), item("Share via DM", "lorem")}, 1},
		{"finding: a text holding the phrase counts", `For the user @lorem, click on the "Mute" button.`,
			[]Element{more("lorem"), item("Mute @lorem", "lorem")}, 1},
		{"finding: not beside a text field", `Find the email by Ida and reply with the text "hi".`,
			[]Element{field(""), {Role: "link", Text: "hi there", Context: "Ida"}}, 0},
		{"click-button: a button's name is no value to type", `Click on the "Next" button.`,
			[]Element{field(""), {Role: "button", Text: "Next"}, {Role: "button", Text: "Prev"}}, 1},
		{"click-button: typing the button's name pays nothing", `Click on the "Next" button.`,
			[]Element{field("Next"), {Role: "button", Text: "Next"}, {Role: "button", Text: "Prev"}}, 1},
		{"a link's name is no value either", `Click on the link "Lorem ipsum".`,
			[]Element{field("lorem ipsum"), {Role: "link", Text: "Lorem ipsum"}}, 1},
		{"a button's name beside a value: only the value is typed", `Enter "Alice" and press "Search".`,
			[]Element{field("Alice"), {Role: "button", Text: "Search"}}, 1},
		{"a button's name beside a value: the value not yet", `Enter "Alice" and press "Search".`,
			[]Element{field("Search"), {Role: "button", Text: "Search"}}, 0},
		{"values are trimmed", `Enter "Ronda" into the text field.`, []Element{field(" Ronda ")}, 1},
		{"checkboxes: none ticked", boxes, []Element{box("nYKs", false), box("0EEvO", false), box("qq", false), button}, 0},
		{"checkboxes: one named ticked", boxes, []Element{box("nYKs", true), box("0EEvO", false), box("qq", false), button}, 0.5},
		{"checkboxes: both named ticked", boxes, []Element{box("nYKs", true), box("0EEvO", true), box("qq", false), button}, 1},
		{"checkboxes: an unnamed one ticked costs", boxes, []Element{box("nYKs", true), box("0EEvO", true), box("qq", true), button}, 0.5},
		{"checkboxes: never below 0", boxes, []Element{box("nYKs", false), box("0EEvO", false), box("qq", true), button}, 0},
		{"radio: the named one", `Select Yes and click Submit.`, []Element{radio("No", false), radio("Yes", true)}, 1},
		{"radio: another one", `Select Yes and click Submit.`, []Element{radio("No", true), radio("Yes", false)}, 0},
		{"select: the first option by default", listInstr, []Element{selected("Kenya"), button}, 0},
		{"select: the named option", listInstr, []Element{selected("Heard Island and McDonald Islands"), button}, 1},
		{"typing and choosing average", `Enter "ab" and select Yes.`, []Element{field("ab"), radio("Yes", false), radio("No", false)}, 0.5},
	} {
		got := instructionPotential(&Observation{Instruction: tc.instr, Elements: tc.els})
		if got != tc.want {
			t.Errorf("%s: potential = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := instructionPotential(nil); got != 0 {
		t.Errorf("potential of no observation = %v, want 0", got)
	}
}

// A truncation takes a potential back, never a rubric's partial credit.
func TestTruncationShaping(t *testing.T) {
	sh := webenv.Shaping{Progress: 0.5}
	if got := TruncationShaping(sh, Info{Potential: true, Partial: 0.75}); got != -0.375 {
		t.Errorf("potential 0.75: %v, want -0.375", got)
	}
	if got := TruncationShaping(sh, Info{Partial: 0.75}); got != 0 {
		t.Errorf("rubric credit 0.75: %v, want 0 (kept)", got)
	}
	if got := TruncationShaping(webenv.Shaping{}, Info{Potential: true, Partial: 1}); got != 0 {
		t.Errorf("shaping off: %v, want 0", got)
	}
}
