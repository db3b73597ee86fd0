package env

import (
	"slices"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// featureArgmax featurizes obs as the actor would and returns the bid of
// the element with the highest sum of the named feature columns, and
// whether that maximum is unique.
func featureArgmax(t *testing.T, arch *policy.Architecture, obs *Observation, names ...string) (string, bool) {
	t.Helper()
	f, err := arch.Featurize(policyObservation(obs))
	if err != nil {
		t.Fatal(err)
	}
	F := len(arch.ElementFeatures)
	best, bestScore, unique := "", float32(-1), false
	for e, bid := range f.BIDs {
		var s float32
		for _, n := range names {
			c := slices.Index(arch.ElementFeatures, n)
			if c < 0 {
				t.Fatalf("no element feature %q", n)
			}
			s += f.ElemFeats[e*F+c]
		}
		switch {
		case s > bestScore:
			best, bestScore, unique = bid, s, true
		case s == bestScore:
			unique = false
		}
	}
	return best, unique
}

// pageFeature featurizes obs as the actor would and reports whether the
// named element feature that is the same on every element (typing done,
// choosing done) holds.
func pageFeature(t *testing.T, arch *policy.Architecture, obs *Observation, name string) bool {
	t.Helper()
	f, err := arch.Featurize(policyObservation(obs))
	if err != nil {
		t.Fatal(err)
	}
	c := slices.Index(arch.ElementFeatures, name)
	if c < 0 {
		t.Fatalf("no element feature %q", name)
	}
	return f.ElemFeats[c] == 1
}

// TestIntegrationMiniWoBHintsAndContext checks, on the benchmark's own pages
// in real Chromium, that what the page says only through tags, classes and
// surrounding text reaches the policy's features: the element those
// features single out is the one to click, and clicking it wins.
func TestIntegrationMiniWoBHintsAndContext(t *testing.T) {
	e, _ := miniwobEnv(t)
	arch := policy.DefaultArchitecture()

	t.Run("social-media: the asked icon of the asked user's tweet", func(t *testing.T) {
		// Reply, Retweet and Like are <span class="like"> icons without
		// text; the user is named only in the tweet around them. The menu
		// actions (hidden until "more" is clicked) are another step.
		checked := 0
		for seed := int64(1); seed <= 40 && checked < 3; seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "social-media", Seed: seed})
			q := quoted(obs.Instruction)
			if len(q) != 1 || !slices.Contains([]string{"Reply", "Retweet", "Like"}, q[0]) {
				continue
			}
			checked++
			bid, unique := featureArgmax(t, &arch, obs, "hint_named", "context_match")
			el := findBID(obs, bid)
			user, _, _ := strings.Cut(strings.TrimPrefix(obs.Instruction, "For the user "), ",")
			if !unique || !strings.Contains(el.Hint, strings.ToLower(q[0])) || !strings.Contains(el.Context, user) {
				t.Fatalf("seed %d %q: hint_named+context_match picks %+v (unique %v)", seed, obs.Instruction, el, unique)
			}
			if r := step(t, e, Action{Type: Click, BID: bid}.String()); !r.Done || !r.Info.Success {
				t.Errorf("seed %d %q: clicking %+v: done %v info %+v", seed, obs.Instruction, el, r.Done, r.Info)
			}
		}
		if checked < 3 {
			t.Fatalf("only %d of seeds 1-40 ask for an icon", checked)
		}
	})

	t.Run("identify-shape: the button that names the figure's kind", func(t *testing.T) {
		for seed := int64(1); seed <= 6; seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "identify-shape", Seed: seed})
			bid, unique := featureArgmax(t, &arch, obs, "names_other")
			el := findBID(obs, bid)
			if !unique || el.Role != "button" {
				t.Fatalf("seed %d: names_other picks %+v (unique %v) among %+v", seed, el, unique, obs.Elements)
			}
			if r := step(t, e, Action{Type: Click, BID: bid}.String()); !r.Done || !r.Info.Success {
				t.Errorf("seed %d: clicking %q: done %v info %+v", seed, el.Text, r.Done, r.Info)
			}
		}
	})

	t.Run("login-user: each value's field is the one its pair feature names", func(t *testing.T) {
		P := len(arch.PairFeatures)
		col := slices.Index(arch.PairFeatures, "intro_in_label")
		for seed := int64(1); seed <= 3; seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "login-user", Seed: seed})
			f, err := arch.Featurize(policyObservation(obs))
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range quoted(obs.Instruction) {
				k := slices.Index(f.Candidates, q)
				var fields []string
				for el, bid := range f.BIDs { // the text fields (FILL's targets)
					if findBID(obs, bid).Role == "textbox" && f.PairFeats[(el*arch.MaxCandidates+k)*P+col] > 0 {
						fields = append(fields, bid)
					}
				}
				if k < 0 || len(fields) != 1 {
					t.Fatalf("seed %d %q: value %q (candidate %d) pairs with fields %v of %+v", seed, obs.Instruction, q, k, fields, obs.Elements)
				}
				if r := step(t, e, Action{Type: Fill, BID: fields[0], Text: q}.String()); r.Done {
					t.Fatalf("seed %d: filling %q ended the episode: %+v", seed, q, r.Info)
				}
			}
			login := slices.IndexFunc(obs.Elements, func(el Element) bool { return el.Text == "Login" })
			if login < 0 {
				t.Fatalf("seed %d: no Login button among %+v", seed, obs.Elements)
			}
			if r := step(t, e, Action{Type: Click, BID: obs.Elements[login].BID}.String()); !r.Done || !r.Info.Success {
				t.Errorf("seed %d %q: after filling by the pair feature, Login: done %v info %+v", seed, obs.Instruction, r.Done, r.Info)
			}
		}
	})

	t.Run("choose-list, click-option: choices_made holds once the named option is chosen", func(t *testing.T) {
		made := func(obs *Observation) bool { return pageFeature(t, &arch, obs, "choices_made") }
		for seed := int64(1); seed <= 4; seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "choose-list", Seed: seed})
			item := between(t, obs.Instruction, "Select ", " from the list and click Submit.")
			sel := slices.IndexFunc(obs.Elements, func(el Element) bool { return len(el.Options) > 0 })
			if sel < 0 {
				t.Fatalf("seed %d: no select among %+v", seed, obs.Elements)
			}
			if got, want := made(obs), obs.Elements[sel].Value == item; got != want {
				t.Fatalf("seed %d: at reset choices_made = %v with %q selected and %q named", seed, got, obs.Elements[sel].Value, item)
			}
			// The select's row of the text head allows its options and
			// nothing else: the named one, never "Submit" or "list".
			f, err := arch.Featurize(policyObservation(obs))
			if err != nil {
				t.Fatal(err)
			}
			row := slices.Index(f.BIDs, obs.Elements[sel].BID)
			if row < 0 {
				t.Fatalf("seed %d: the select is not among the kept elements %q", seed, f.BIDs)
			}
			for k, c := range f.Candidates {
				allowed := f.CandMask[row*arch.MaxCandidates+k] == 1
				if want := slices.Contains(obs.Elements[sel].Options, c); allowed != want {
					t.Fatalf("seed %d: candidate %q allowed %v for the select with options %q", seed, c, allowed, obs.Elements[sel].Options)
				}
			}
			if !slices.Contains(f.Candidates, item) {
				t.Fatalf("seed %d: the named option %q is no candidate (%q)", seed, item, f.Candidates)
			}
			r := step(t, e, Action{Type: SelectOption, BID: obs.Elements[sel].BID, Options: []string{item}}.String())
			if r.Done || r.Obs == nil || !made(r.Obs) {
				t.Fatalf("seed %d: after selecting %q: done %v, choices_made false (obs %+v)", seed, item, r.Done, r.Obs)
			}
		}
		for seed := int64(1); seed <= 4; seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "click-option", Seed: seed})
			item := between(t, obs.Instruction, "Select ", " and click Submit.")
			radio := slices.IndexFunc(obs.Elements, func(el Element) bool { return el.Role == "radio" && el.Text == item })
			if radio < 0 {
				t.Fatalf("seed %d: no radio %q among %+v", seed, item, obs.Elements)
			}
			if made(obs) {
				t.Fatalf("seed %d: choices_made before any radio is checked", seed)
			}
			r := step(t, e, Action{Type: Click, BID: obs.Elements[radio].BID}.String())
			if r.Done || r.Obs == nil || !made(r.Obs) {
				t.Fatalf("seed %d: after checking %q: done %v, choices_made false (obs %+v)", seed, item, r.Done, r.Obs)
			}
		}
	})

	t.Run("click-checkboxes: a label is as checked as its box", func(t *testing.T) {
		// The policy clicks labels; one that looked the same ticked and
		// unticked was clicked again (and the box unticked) the next step.
		for seed := int64(1); seed <= 3; seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "click-checkboxes", Seed: seed})
			label := slices.IndexFunc(obs.Elements, func(el Element) bool { return el.Role == "label" && el.Text != "" })
			if label < 0 {
				t.Fatalf("seed %d: no label among %+v", seed, obs.Elements)
			}
			el := obs.Elements[label]
			if el.Checked {
				t.Fatalf("seed %d: label %q checked at reset", seed, el.Text)
			}
			for i, want := range []bool{true, false} {
				r := step(t, e, Action{Type: Click, BID: el.BID}.String())
				if r.Done || r.Obs == nil {
					t.Fatalf("seed %d: clicking label %q ended the episode", seed, el.Text)
				}
				box := slices.IndexFunc(r.Obs.Elements, func(b Element) bool { return b.Role == "checkbox" && b.Text == el.Text })
				got := findBID(r.Obs, el.BID)
				if box < 0 || got.Checked != want || r.Obs.Elements[box].Checked != want {
					t.Fatalf("seed %d: after click %d on label %q: label checked %v, box %+v; want both %v", seed, i+1, el.Text, got.Checked, r.Obs.Elements, want)
				}
			}
		}
	})

	t.Run("click-button: a button's name is no value to type; enter-text's is", func(t *testing.T) {
		typed := func(obs *Observation) bool { return pageFeature(t, &arch, obs, "quotes_typed") }
		withField := 0
		for seed := int64(1); seed <= 40 && withField < 3; seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "click-button", Seed: seed})
			if !slices.ContainsFunc(obs.Elements, func(el Element) bool { return el.Role == "textbox" }) {
				continue // the distractors are random; only pages with a field tell
			}
			withField++
			if !typed(obs) {
				t.Fatalf("seed %d %q: quotes_typed false on a page with nothing to type (%+v)", seed, obs.Instruction, obs.Elements)
			}
		}
		if withField < 3 {
			t.Fatalf("only %d of click-button's seeds 1-40 show a text field", withField)
		}
		for seed := int64(1); seed <= 3; seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "enter-text", Seed: seed})
			if typed(obs) {
				t.Fatalf("seed %d %q: quotes_typed before anything is typed", seed, obs.Instruction)
			}
		}
	})

	t.Run("use-spinner: the number, negative or not, is a candidate whole, and typing it wins", func(t *testing.T) {
		seen := map[bool]int{} // by sign
		for seed := int64(1); seed <= 40 && (seen[true] < 2 || seen[false] < 2); seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "use-spinner", Seed: seed})
			n := between(t, obs.Instruction, "Select ", " with the spinner and hit Submit.")
			neg := strings.HasPrefix(n, "-")
			if seen[neg] >= 2 {
				continue
			}
			seen[neg]++
			f, err := arch.Featurize(policyObservation(obs))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(f.Candidates, n) {
				t.Fatalf("seed %d %q: %q is no text candidate (%q)", seed, obs.Instruction, n, f.Candidates)
			}
			spin := slices.IndexFunc(obs.Elements, func(el Element) bool { return el.Role == "spinbutton" || el.Role == "textbox" })
			submit := slices.IndexFunc(obs.Elements, func(el Element) bool { return el.Text == "Submit" })
			if spin < 0 || submit < 0 {
				t.Fatalf("seed %d: no spinner or Submit among %+v", seed, obs.Elements)
			}
			if r := step(t, e, Action{Type: Fill, BID: obs.Elements[spin].BID, Text: n}.String()); r.Done {
				t.Fatalf("seed %d: filling %q ended the episode: %+v", seed, n, r.Info)
			}
			if r := step(t, e, Action{Type: Click, BID: obs.Elements[submit].BID}.String()); !r.Done || !r.Info.Success {
				t.Errorf("seed %d %q: after typing %q, Submit: done %v info %+v", seed, obs.Instruction, n, r.Done, r.Info)
			}
		}
		if seen[true] < 2 || seen[false] < 2 {
			t.Fatalf("use-spinner's seeds 1-40 ask for %d negative and %d other numbers, want 2 each", seen[true], seen[false])
		}
	})

	t.Run("grid-coordinate: the point whose id is the asked coordinate", func(t *testing.T) {
		for seed := int64(1); seed <= 4; seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "grid-coordinate", Seed: seed})
			bid, unique := featureArgmax(t, &arch, obs, "id_is_value")
			el := findBID(obs, bid)
			if !unique || el.DOMID == "" || !strings.Contains(obs.Instruction, el.DOMID) {
				t.Fatalf("seed %d %q: id_is_value picks %+v (unique %v)", seed, obs.Instruction, el, unique)
			}
			if r := step(t, e, Action{Type: Click, BID: bid}.String()); !r.Done || !r.Info.Success {
				t.Errorf("seed %d %q: clicking %+v: done %v info %+v", seed, obs.Instruction, el, r.Done, r.Info)
			}
		}
	})

	t.Run("focus-text-2: the ordinal picks the nth textbox", func(t *testing.T) {
		for seed := int64(1); seed <= 3; seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "focus-text-2", Seed: seed})
			bid, unique := featureArgmax(t, &arch, obs, "ordinal", "hint_named")
			el := findBID(obs, bid)
			if !unique || el.Role != "textbox" {
				t.Fatalf("seed %d %q: ordinal+hint_named picks %+v (unique %v)", seed, obs.Instruction, el, unique)
			}
			if r := step(t, e, Action{Type: Click, BID: bid}.String()); !r.Done || !r.Info.Success {
				t.Errorf("seed %d %q: clicking %+v: done %v info %+v", seed, obs.Instruction, el, r.Done, r.Info)
			}
		}
	})
}
