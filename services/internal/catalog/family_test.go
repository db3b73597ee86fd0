package catalog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The table is easy first, each name once, each row complete: Families and
// the listings keep its order.
func TestBuiltinTable(t *testing.T) {
	fams := BuiltinFamilies()
	if len(fams) != 26 {
		t.Errorf("%d built-in families, want 26", len(fams))
	}
	seen := map[string]bool{}
	for i, f := range fams {
		if seen[f.Name] {
			t.Errorf("%s twice", f.Name)
		}
		seen[f.Name] = true
		if i > 0 && fams[i-1].Tier > f.Tier {
			t.Errorf("%s (%s) after %s (%s): the table is not easy first", f.Name, f.Tier, fams[i-1].Name, fams[i-1].Tier)
		}
		if f.Name == "" || f.Desc == "" || f.Viewport.W == 0 || f.MaxTime <= 0 || f.Tier == Unrated {
			t.Errorf("incomplete row %+v", f)
		}
		if got, ok := Builtin(f.Name); !ok || got != f {
			t.Errorf("Builtin(%s) = %+v, %v", f.Name, got, ok)
		}
	}
	if _, ok := Builtin("no-such-family"); ok {
		t.Error("an unknown family was found")
	}
	if got := Families(); len(got) != len(fams) || got[0].Name != fams[0].Name || got[len(got)-1].Name != fams[len(fams)-1].Name {
		t.Errorf("Families does not list the table in order")
	}
}

func TestSplitIsDeterministicAndOneTestSitePerFamily(t *testing.T) {
	testSites := map[string]int{}
	for _, fi := range Families() {
		var tests []string
		for _, s := range fi.Sites {
			if s.Split == SplitTest {
				tests = append(tests, s.Name)
			}
			if SiteSplit(fi.Name, s.Name) != s.Split {
				t.Errorf("%s/%s: split changed between calls", fi.Name, s.Name)
			}
		}
		if len(tests) != 1 || tests[0] != TestSite(fi.Name) {
			t.Errorf("%s: test sites %v, want exactly [%s]", fi.Name, tests, TestSite(fi.Name))
		}
		testSites[tests[0]]++
		if got := SitesOf(fi.Name, SplitTrain); len(got) != len(Sites)-1 {
			t.Errorf("%s: train sites %v", fi.Name, got)
		}
		if got := SitesOf(fi.Name, SplitAll); len(got) != len(Sites) {
			t.Errorf("%s: all sites %v", fi.Name, got)
		}
	}
	// The hash spreads the test split over the themes.
	if len(testSites) < 3 {
		t.Errorf("test sites use only %d themes: %v", len(testSites), testSites)
	}
	if _, err := ParseSplit("validation"); err == nil {
		t.Error("ParseSplit accepted an unknown split")
	}
}

func TestPrintFamilies(t *testing.T) {
	var text bytes.Buffer
	if err := PrintFamilies(&text, "text", Families()); err != nil {
		t.Fatal(err)
	}
	for _, fi := range Families() {
		line := ""
		for _, l := range strings.Split(text.String(), "\n") {
			if strings.HasPrefix(l, fi.Name+" ") {
				line = l
			}
		}
		if line == "" || !strings.Contains(line, fi.Tier.String()) || !strings.Contains(line, TestSite(fi.Name)) {
			t.Errorf("%s: bad line %q", fi.Name, line)
		}
	}
	var js bytes.Buffer
	if err := PrintFamilies(&js, "json", Families()); err != nil {
		t.Fatal(err)
	}
	var got []FamilyInfo
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || len(got) != len(Families()) {
		t.Fatalf("json: %v, %d families", err, len(got))
	}
	if err := PrintFamilies(&js, "yaml", Families()); err == nil {
		t.Error("an unknown format was accepted")
	}
}

func TestTierNamesAndBudgets(t *testing.T) {
	for _, tier := range []Tier{Easy, Medium, Hard} {
		got, err := ParseTier(strings.ToUpper(tier.String()))
		if err != nil || got != tier {
			t.Fatalf("ParseTier(%q) = %v, %v", tier, got, err)
		}
	}
	if _, err := ParseTier("extreme"); err == nil {
		t.Fatal("unknown tier accepted")
	}
	if !(Easy.StepBudget() < Medium.StepBudget() && Medium.StepBudget() < Hard.StepBudget()) {
		t.Fatalf("budgets not increasing: %d %d %d", Easy.StepBudget(), Medium.StepBudget(), Hard.StepBudget())
	}
}
