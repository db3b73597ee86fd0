package webenv

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
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
	fams := catalog.Families()
	if len(fams) < 24 {
		t.Fatalf("%d families, want at least 24", len(fams))
	}
	tiers := map[catalog.Tier]int{}
	for _, fi := range fams {
		tiers[fi.Tier]++
		if len(fi.Sites) != len(catalog.Sites) {
			t.Errorf("%s: %d sites, want %d", fi.Name, len(fi.Sites), len(catalog.Sites))
		}
		for _, s := range catalog.Sites {
			for seed := int64(0); seed < 8; seed++ {
				p, err := Generate(fi.Name, s.Name, seed)
				if err != nil {
					t.Fatalf("%s/%s/%d: %v", fi.Name, s.Name, seed, err)
				}
				n := len(p.Facts)
				ok := (fi.Tier == catalog.Easy && n >= 1 && n <= 3) || (fi.Tier == catalog.Medium && n >= 4 && n <= 6) || (fi.Tier == catalog.Hard && n >= 7)
				if !ok {
					t.Errorf("%s/%s/%d: %d facts for tier %s", fi.Name, s.Name, seed, n, fi.Tier)
				}
				if p.Instruction == "" || len(p.Plan) == 0 || (p.HTML == "" && p.Pages == nil) {
					t.Errorf("%s/%s/%d: empty instruction, plan or page", fi.Name, s.Name, seed)
				}
				if fi.Tier == catalog.Hard && p.Pages == nil {
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
	for _, tier := range []catalog.Tier{catalog.Easy, catalog.Medium, catalog.Hard} {
		if tiers[tier] == 0 {
			t.Errorf("no %s family", tier)
		}
	}
	t.Logf("families: %d (easy %d, medium %d, hard %d)", len(fams), tiers[catalog.Easy], tiers[catalog.Medium], tiers[catalog.Hard])
}

func TestGenerateIsDeterministic(t *testing.T) {
	for _, fi := range catalog.Families() {
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
	for _, fi := range catalog.Families() {
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

// Every family of the catalogue has a generator and every generator a
// family of the catalogue: the metadata and the pages cannot drift apart.
func TestEveryCatalogueFamilyHasAGenerator(t *testing.T) {
	for _, f := range catalog.BuiltinFamilies() {
		if generators[f.Name] == nil {
			t.Errorf("catalogue family %s has no generator (register it in a fam_*.go file)", f.Name)
		}
	}
	for name := range generators {
		if _, ok := catalog.Builtin(name); !ok {
			t.Errorf("generator %s has no row in the catalogue (services/internal/catalog)", name)
		}
	}
	if len(generators) != len(catalog.BuiltinFamilies()) {
		t.Errorf("%d generators, %d catalogue families", len(generators), len(catalog.BuiltinFamilies()))
	}
}
