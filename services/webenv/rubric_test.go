package webenv

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestPartialCredit(t *testing.T) {
	p, err := Generate("tick-checkboxes", "aurora", 4)
	if err != nil {
		t.Fatal(err)
	}
	// The plan's clicks name the boxes to tick (all but the last step).
	var targets []string
	for _, s := range p.Plan[:len(p.Plan)-1] {
		targets = append(targets, strings.TrimSuffix(strings.TrimPrefix(s.Sel, `input[data-k="`), `"]`))
	}
	st := newState()
	// Nothing ticked: only "left the others unticked" holds.
	_, partial, success := Evaluate(p.Facts, st)
	if math.Abs(partial-1.0/3) > 1e-9 || success {
		t.Fatalf("empty state: partial %v success %v, want 1/3 false", partial, success)
	}
	for _, k := range targets {
		st.Values[k] = "1"
	}
	results, partial, success := Evaluate(p.Facts, st)
	if math.Abs(partial-2.0/3) > 1e-9 || success {
		t.Fatalf("targets ticked: partial %v success %v (%+v)", partial, success, results)
	}
	st.End = &Event{T: "click", K: "submit"}
	if _, partial, success = Evaluate(p.Facts, st); partial != 1 || !success {
		t.Fatalf("submitted: partial %v success %v", partial, success)
	}
	if got := GroupsMet(results); len(got) != 1 || got[0] != "boxes" {
		t.Errorf("groups met %v, want [boxes]", got)
	}
}

func TestEpisodeApplyScoresAndEnds(t *testing.T) {
	p, _ := Generate("type-text", "cedar", 9)
	text := p.Plan[0].Text
	now := time.Unix(1000, 0)
	ep := newEpisode(p, now)
	s := ep.Apply([]Event{{T: "set", K: "text", V: "wrong"}}, now)
	if s.Done || s.Partial != 0 {
		t.Fatalf("wrong text: %+v", s)
	}
	s = ep.Apply([]Event{{T: "set", K: "text", V: text}}, now)
	if s.Done || s.Partial != 0.5 || s.Facts[0].Met != true {
		t.Fatalf("right text: %+v", s)
	}
	v := s.Version
	s = ep.Apply([]Event{{T: "click", K: "submit"}}, now)
	if !s.Done || !s.Success || s.Raw != 1 || s.Reason != "success" || s.Version <= v {
		t.Fatalf("submit: %+v", s)
	}
	// A finished episode ignores further events.
	s = ep.Apply([]Event{{T: "set", K: "text", V: "changed"}}, now)
	if !s.Success || ep.st.Values["text"] != text {
		t.Fatalf("after done: %+v", s)
	}
}

func TestEpisodeFailureListsMissingFacts(t *testing.T) {
	p, _ := Generate("click-button", "aurora", 2)
	now := time.Unix(1000, 0)
	ep := newEpisode(p, now)
	s := ep.Apply([]Event{{T: "click", K: "btn", V: "not-the-label"}}, now)
	if !s.Done || s.Success || s.Raw != -1 || !strings.HasPrefix(s.Reason, "facts not met: clicked the") {
		t.Fatalf("wrong button: %+v", s)
	}
}

func TestEpisodeTimesOut(t *testing.T) {
	p, _ := Generate("type-text", "aurora", 1)
	now := time.Unix(1000, 0)
	ep := newEpisode(p, now)
	s := ep.Apply([]Event{{T: "set", K: "text", V: p.Plan[0].Text}}, now.Add(p.MaxTime+deadlineGrace+time.Second))
	if !s.Done || s.Reason != "timed out" || s.Raw != -1 || ep.st.Values["text"] != "" {
		t.Fatalf("late event: %+v", s)
	}
	ep2 := newEpisode(p, now)
	if s := ep2.Apply([]Event{{T: "timeout"}}, now); !s.Done || s.Reason != "timed out" {
		t.Fatalf("page time-out: %+v", s)
	}
}

func TestValidationBlocksTheTerminalEvent(t *testing.T) {
	p, _ := Generate("signup-form", "aurora", 5)
	now := time.Unix(1000, 0)
	ep := newEpisode(p, now)
	s := ep.Apply([]Event{{T: "set", K: "email", V: "not-an-email"}, {T: "click", K: "submit"}}, now)
	if s.Done || s.Errors["email"] == "" || s.Errors["name"] == "" {
		t.Fatalf("invalid form ended the episode or gave no errors: %+v", s)
	}
	var evs []Event
	for _, st := range p.Plan[:4] {
		k := strings.TrimSuffix(strings.SplitN(st.Sel, `data-k="`, 2)[1], `"]`)
		evs = append(evs, Event{T: "set", K: k, V: st.Text})
	}
	s = ep.Apply(append(evs, Event{T: "click", K: "submit"}), now)
	if !s.Done || !s.Success || len(s.Errors) != 0 {
		t.Fatalf("valid form: %+v", s)
	}
}

func TestInitialValuesCount(t *testing.T) {
	// settings-toggles draws pre-set switches: untouched, the "others
	// unchanged" fact holds from the start.
	p, _ := Generate("settings-toggles", "dune", 3)
	ep := newEpisode(p, time.Unix(0, 0))
	s := ep.Score(time.Unix(0, 0))
	if !s.Facts[2].Met || s.Facts[0].Met || s.Facts[1].Met {
		t.Fatalf("initial facts: %+v", s.Facts)
	}
}

func TestShaping(t *testing.T) {
	s, err := ParseShaping("progress=1,subgoal,noop=0.2")
	if err != nil {
		t.Fatal(err)
	}
	if s.Progress != 1 || s.SubGoal != DefaultShaping.SubGoal || s.NoOpClick != 0.2 || s.Repeat != 0 {
		t.Fatalf("parsed %+v", s)
	}
	terms := s.Terms(StepFacts{PrevPartial: 0.25, Partial: 0.5, PrevGroups: []string{"a"}, Groups: []string{"a", "b"}, Click: true})
	if terms.Progress != 0.25 || terms.SubGoal != DefaultShaping.SubGoal || terms.NoOpClick != -0.2 || terms.Repeat != 0 {
		t.Fatalf("terms %+v", terms)
	}
	if off, _ := ParseShaping("off"); off.Terms(StepFacts{Partial: 1, Click: true, Repeated: true}).Total() != 0 {
		t.Error("shaping off still shapes")
	}
	if on, _ := ParseShaping("on"); on != DefaultShaping {
		t.Errorf("on = %+v", on)
	}
	for _, bad := range []string{"speed=1", "progress=-1", "progress=x"} {
		if _, err := ParseShaping(bad); err == nil {
			t.Errorf("ParseShaping(%q) accepted", bad)
		}
	}
}
