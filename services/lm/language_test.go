package lm

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
)

// sample draws an answer of l at random.
func sample(l *Language, rng *rand.Rand) string {
	var b strings.Builder
	digits := func(n int) {
		for range n {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
	}
	for _, p := range l.alts[rng.IntN(len(l.alts))] {
		switch p.kind {
		case partLit, partChoice:
			b.WriteString(p.lits[rng.IntN(len(p.lits))])
		case partNum:
			digits(1 + rng.IntN(4))
		case partInt:
			if rng.IntN(2) == 0 {
				b.WriteByte('-')
			}
			digits(1 + rng.IntN(4))
		case partStr, partText, partKey:
			alphabet := []rune("abc XYZ_9+-é日!")
			if p.kind == partKey {
				alphabet = []rune("aZ09+")
			}
			b.WriteByte('"')
			for range rng.IntN(12) + map[partKind]int{partStr: 0, partText: 1, partKey: 1}[p.kind] {
				b.WriteRune(alphabet[rng.IntN(len(alphabet))])
			}
			b.WriteByte('"')
		}
	}
	return b.String()
}

// TestLanguage: every answer of a page's language parses as an action on
// that page (its bids there, its type in the set), each of its prefixes is
// a prefix and none is complete before its end but the whole; and what the
// language does not hold is refused.
func TestLanguage(t *testing.T) {
	obs := page()
	for _, set := range []action.Set{action.SetBid, action.SetBidCoord} {
		l := NewLanguage(obs, set, AnswerAction)
		rng := rand.New(rand.NewPCG(1, 2))
		for range 2000 {
			s := sample(l, rng)
			if !l.Complete(s) {
				t.Fatalf("%s: sampled %q is not complete", set, s)
			}
			a, err := action.Parse(s)
			if err != nil {
				t.Fatalf("%s: %q does not parse: %v", set, s, err)
			}
			if a.BID != "" && !hasBID(obs, a.BID) {
				t.Fatalf("%q: bid not on the page", s)
			}
			for i := range len(s) {
				if !l.Prefix(s[:i]) {
					t.Fatalf("%s: %q is not a prefix of the language (of %q)", set, s[:i], s)
				}
			}
		}
		for _, bad := range []string{`click("99")`, `click(5)`, `goto("x")`, `fill("5", "x")`, `click("3"))`, `fill("3", "a"b")`,
			`select_option("7", "green")`, `mouse_click(12345, 1)`, `press("")`, "noop() ", `click("3")` + "\n"} {
			if l.Complete(bad) {
				t.Errorf("%s: %q is complete", set, bad)
			}
		}
		for _, bad := range []string{"x", "click(\"9", "fill(\"5", "mouse_click(1, 2, "} {
			if l.Prefix(bad) {
				t.Errorf("%s: %q is a prefix", set, bad)
			}
		}
	}
	if l := NewLanguage(page(), action.SetBid, AnswerAction); l.Prefix("mouse_click(") || !l.Prefix(`press("Control+a`) {
		t.Error("the bid set's language")
	}
}

// FuzzLanguagePrefix: Prefix never panics, and a complete string is a
// prefix.
func FuzzLanguagePrefix(f *testing.F) {
	l := NewLanguage(page(), action.SetBidCoord, AnswerTarget)
	for _, s := range []string{`click("3")`, `fill("4", "x`, "mouse_click(12, 3", "", `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if l.Complete(s) && !l.Prefix(s) {
			t.Fatalf("%q complete but not a prefix", s)
		}
	})
}

// TestLanguageUTF8: a string may end inside a character (the next token
// brings the rest), but bytes that are no UTF-8 are refused, so that a
// complete answer is always valid UTF-8.
func TestLanguageUTF8(t *testing.T) {
	l := NewLanguage(page(), action.SetBid, AnswerAction)
	e := "é" // 2 bytes
	if !l.Prefix(`fill("3", "caf` + e[:1]) {
		t.Error("a character's first byte at the end was refused")
	}
	if !l.Complete(`fill("3", "caf` + e + `")`) {
		t.Error("a whole character was refused")
	}
	for _, bad := range []string{`fill("3", "caf` + e[:1] + `x`, `fill("3", "` + "\xff", `fill("3", "` + e[:1] + `")`} {
		if l.Prefix(bad) {
			t.Errorf("%q is a prefix", bad)
		}
	}
}

// TestLanguageTarget: in the target form every element action comes after
// the comment line of the element it acts on, and only that element's
// (a comment decides the bid); actions on no element have no comment;
// every answer parses, and ParseReply takes the action after the comment;
// an action without its comment, or after another element's, is refused.
func TestLanguageTarget(t *testing.T) {
	obs := page()
	for _, set := range []action.Set{action.SetBid, action.SetBidCoord} {
		l := NewLanguage(obs, set, AnswerTarget)
		rng := rand.New(rand.NewPCG(3, 4))
		comments := 0
		for range 2000 {
			s := sample(l, rng)
			if !l.Complete(s) {
				t.Fatalf("%s: sampled %q is not complete", set, s)
			}
			for i := range len(s) {
				if !l.Prefix(s[:i]) {
					t.Fatalf("%s: %q is not a prefix of the language (of %q)", set, s[:i], s)
				}
			}
			comment, act, ok := strings.Cut(s, "\n")
			if !ok {
				act = s
			}
			a, err := action.Parse(act)
			if err != nil {
				t.Fatalf("%s: %q does not parse: %v", set, s, err)
			}
			if r, _ := action.ByName(a.Type); r.Target == action.TargetElement {
				// ParseReply takes the action after its comment (a point
				// may be outside the frame: the language does not know it).
				if got, err := ParseReply(s, obs, set); err != nil || got.String() != a.String() {
					t.Fatalf("%s: %q parsed to %v, %v", set, s, got, err)
				}
			}
			r, _ := action.ByName(a.Type)
			if !ok {
				if r.Target == action.TargetElement {
					t.Fatalf("%s: %q acts on an element without naming it", set, s)
				}
				continue
			}
			comments++
			if r.Target != action.TargetElement || !strings.HasSuffix(comment, " ["+a.BID+"]") || !strings.HasPrefix(act, string(a.Type)+"(") {
				t.Fatalf("%s: %q: the comment names another element than %s's %q", set, s, a.Type, a.BID)
			}
		}
		if comments == 0 {
			t.Fatalf("%s: no answer named an element", set)
		}
		for _, bad := range []string{`click("5")`, "# button \"Login\" [5]\nclick(\"3\")", "# button \"Login\" [3]\nclick(\"3\")",
			"# button \"Login\" [5]\nnoop()", "# button \"Login\" [5]\nfill(\"5\", \"x\")"} {
			if l.Complete(bad) {
				t.Errorf("%s: %q is complete", set, bad)
			}
		}
		for _, good := range []string{"# button \"Login\" [5]\nclick(\"5\")", "# textbox \"Password\" [4]\nfill(\"4\", \"x_9b\")", "noop()",
			"# checkbox \"remember me\" [6]\nclick(\"6\")", "# combobox [7]\nselect_option(\"7\", \"red\")"} {
			if !l.Complete(good) {
				t.Errorf("%s: %q is not complete", set, good)
			}
		}
	}
}

// TestAnswerText: a demonstration's answer in each form is in the page's
// language of that form: a comment before an action on an element (its
// first element of that bid), none before a press or a wait.
func TestAnswerText(t *testing.T) {
	obs := page()
	for _, tc := range []struct {
		act    *eventspb.Action
		target string
	}{
		{&eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: "5", Raw: `click("5")`}, "# button \"Login\" [5]\nclick(\"5\")"},
		{&eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_FILL, Bid: "4", Text: "x_9b", Raw: `fill("4", "x_9b")`}, "# textbox \"Password\" [4]\nfill(\"4\", \"x_9b\")"},
		{&eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_PRESS, Bid: "4", Key: "Enter", Raw: `press("Enter")`}, `press("Enter")`},
		{&eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_NOOP, Raw: `noop()`}, `noop()`},
	} {
		for _, a := range Answers {
			got, want := AnswerText(obs, tc.act, a), tc.act.GetRaw()
			if a == AnswerTarget {
				want = tc.target
			}
			if got != want {
				t.Errorf("%s, %s: %q, want %q", tc.act.GetRaw(), a, got, want)
			}
			if l := NewLanguage(obs, action.SetBid, a); !l.Complete(got) {
				t.Errorf("%s: %q is not in the page's language", a, got)
			}
		}
	}
}

// TestLanguageFreeText: a prefix ends in free text when what follows is a
// string's or key's characters in every way it can continue (a fill's
// value, a message, a key), and in the structure when an action, an
// element, an option or the end is still to be chosen, in both forms.
func TestLanguageFreeText(t *testing.T) {
	obs := page()
	for _, tc := range []struct {
		form Answer
		s    string
		want bool
	}{
		{AnswerAction, "", false},
		{AnswerAction, "fi", false},
		{AnswerAction, `fill("`, false},
		{AnswerAction, `fill("3", `, true},
		{AnswerAction, `fill("3", "ab c`, true},
		{AnswerAction, `fill("3", "ab c"`, false},
		{AnswerAction, `send_msg_to_user("`, true},
		{AnswerAction, `press("Con`, true},
		{AnswerAction, `click("3")`, false},
		{AnswerTarget, "# ", false},
		{AnswerTarget, "# textbox", false},
		{AnswerTarget, `send_msg_to_user("he`, true},
	} {
		l := NewLanguage(obs, action.SetBid, tc.form)
		if !l.Prefix(tc.s) {
			t.Fatalf("%s: %q is no prefix of the page's language", tc.form, tc.s)
		}
		if got := l.FreeText(tc.s); got != tc.want {
			t.Errorf("%s: FreeText(%q) = %v, want %v", tc.form, tc.s, got, tc.want)
		}
	}
	// Every prefix of a sampled answer that ends in free text is inside
	// quotes the answer's structure opened.
	l := NewLanguage(obs, action.SetBid, AnswerTarget)
	rng := rand.New(rand.NewPCG(5, 6))
	free := 0
	for range 500 {
		s := sample(l, rng)
		for i := range len(s) {
			if l.FreeText(s[:i]) {
				free++
				if _, after, ok := strings.Cut(s[:i], "\n"); ok && !strings.Contains(after, `"`) && !strings.HasSuffix(after, ", ") && !strings.HasSuffix(after, "(") {
					t.Errorf("%q: free text at %q", s, s[:i])
				}
			}
		}
	}
	if free == 0 {
		t.Error("no sampled prefix ended in free text")
	}
}
