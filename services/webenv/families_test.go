package webenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// problemPrint is everything a problem shows or plans, for comparisons.
func problemPrint(p *Problem) string {
	var b strings.Builder
	b.WriteString(p.Instruction)
	b.WriteString("\x00")
	b.WriteString(p.HTML)
	if p.Pages != nil {
		res := p.Pages(PageRequest{Base: "/e/x", Method: "GET", Path: "/", Query: url.Values{}, State: newState()})
		b.WriteString(res.HTML)
	}
	fmt.Fprintf(&b, "%v", p.Plan)
	for _, f := range p.Facts {
		b.WriteString(f.Name)
	}
	return b.String()
}

func TestFamiliesTiersAndFacts(t *testing.T) {
	fams := Families()
	if len(fams) < 24 {
		t.Fatalf("%d families, want at least 24", len(fams))
	}
	tiers := map[Tier]int{}
	for _, fi := range fams {
		tiers[fi.Tier]++
		if len(fi.Sites) != len(Sites) {
			t.Errorf("%s: %d sites, want %d", fi.Name, len(fi.Sites), len(Sites))
		}
		for _, s := range Sites {
			for seed := int64(0); seed < 8; seed++ {
				p, err := Generate(fi.Name, s.Name, seed)
				if err != nil {
					t.Fatalf("%s/%s/%d: %v", fi.Name, s.Name, seed, err)
				}
				n := len(p.Facts)
				ok := (fi.Tier == Easy && n >= 1 && n <= 3) || (fi.Tier == Medium && n >= 4 && n <= 6) || (fi.Tier == Hard && n >= 7)
				if !ok {
					t.Errorf("%s/%s/%d: %d facts for tier %s", fi.Name, s.Name, seed, n, fi.Tier)
				}
				if p.Instruction == "" || len(p.Plan) == 0 || (p.HTML == "" && p.Pages == nil) {
					t.Errorf("%s/%s/%d: empty instruction, plan or page", fi.Name, s.Name, seed)
				}
				if fi.Tier == Hard && p.Pages == nil {
					t.Errorf("%s: a hard family must be a multi-page site", fi.Name)
				}
				for _, f := range p.Facts {
					if f.Name == "" || f.Group == "" || f.Check == nil {
						t.Errorf("%s: fact %+v is incomplete", fi.Name, f)
					}
				}
			}
		}
	}
	for _, tier := range []Tier{Easy, Medium, Hard} {
		if tiers[tier] == 0 {
			t.Errorf("no %s family", tier)
		}
	}
	t.Logf("families: %d (easy %d, medium %d, hard %d)", len(fams), tiers[Easy], tiers[Medium], tiers[Hard])
}

func TestGenerateIsDeterministic(t *testing.T) {
	for _, fi := range Families() {
		for _, site := range []string{"aurora", "dune"} {
			for seed := int64(0); seed < 5; seed++ {
				a, _ := Generate(fi.Name, site, seed)
				b, _ := Generate(fi.Name, site, seed)
				if problemPrint(a) != problemPrint(b) {
					t.Errorf("%s/%s/%d: two generations differ", fi.Name, site, seed)
				}
			}
		}
	}
}

func TestDifferentSeedsDiffer(t *testing.T) {
	const n = 20
	for _, fi := range Families() {
		seen := map[string]bool{}
		for seed := int64(0); seed < n; seed++ {
			p, _ := Generate(fi.Name, "basalt", seed*7919+3)
			seen[problemPrint(p)] = true
		}
		// Layout, labels and distractors all vary; a collision or two would
		// be chance, more would be a generator that ignores its seed.
		if len(seen) < n-1 {
			t.Errorf("%s: only %d distinct problems in %d seeds", fi.Name, len(seen), n)
		}
		// Sites differ too, for the same seed.
		a, _ := Generate(fi.Name, "aurora", 1)
		c, _ := Generate(fi.Name, "cedar", 1)
		if problemPrint(a) == problemPrint(c) {
			t.Errorf("%s: sites aurora and cedar give the same problem for seed 1", fi.Name)
		}
	}
}

func TestGenerateRejectsUnknowns(t *testing.T) {
	if _, err := Generate("no-such-family", "aurora", 1); err == nil || !strings.Contains(err.Error(), "unknown task family") {
		t.Errorf("unknown family: %v", err)
	}
	if _, err := Generate("click-button", "nowhere", 1); err == nil || !strings.Contains(err.Error(), "unknown site") {
		t.Errorf("unknown site: %v", err)
	}
	if _, err := Generate("click-button", "aurora", -3); err == nil || !strings.Contains(err.Error(), "unknown seed") {
		t.Errorf("negative seed: %v", err)
	}
	// Large seeds are fine: seeds are unlimited.
	if _, err := Generate("click-button", "aurora", 1<<62); err != nil {
		t.Errorf("large seed: %v", err)
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
	if err := PrintFamilies(&text, "text"); err != nil {
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
	if err := PrintFamilies(&js, "json"); err != nil {
		t.Fatal(err)
	}
	var got []FamilyInfo
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || len(got) != len(Families()) {
		t.Fatalf("json: %v, %d families", err, len(got))
	}
	if err := PrintFamilies(&js, "yaml"); err == nil {
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
