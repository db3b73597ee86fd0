package policyaudit

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/oracle"
)

// TestIntegrationPolicyAudit replays every built-in family's solution, and
// every MiniWoB++ task's scripted solver, in
// real Chromium (two seeds each), each step as the policy's heads express
// it, and fails on any step they cannot express or an episode that is not
// won: the bar, in make test. Among them a hard family's fills
// type values copied from an earlier page (find-and-report), names and
// emails copied as instruction spans (flight-booking, shop-checkout) and a
// code copied from the page's text (copy-text). Then it shows what the
// memory buys: find-and-report types on its report page a phone, an email
// and an office read on the manager's page before it, and without a memory
// (0 steps) the audit names those fills and says the values are nowhere
// the policy sees, while copy-text's code, on its own page's text, stays
// expressible. Every MiniWoB++ solver's steps are expressible too (features
// v19): terminal's commands typed by keyboard_type, use-colorwheel-2's
// colour set with the picker's pad and slider, scroll-text's last word
// copied from the text area's part in view.
func TestIntegrationPolicyAudit(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	audit := func(fams []catalog.FamilyInfo, memory int) (map[string]Finding, string) {
		got, err := Audit(ctx, Options{Families: fams, Seeds: 2, Memory: memory, MiniWoBDir: testenv.MiniWoBDir(t)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]Finding{}
		for _, f := range got {
			by[f.Family] = f
		}
		var b bytes.Buffer
		if err := Print(&b, got); err != nil {
			t.Fatal(err)
		}
		return by, b.String()
	}
	all := catalog.SuiteFamilies(catalog.SuiteBuiltin)
	by, out := audit(all, actor.DefaultMemorySteps)
	for _, fam := range all {
		if f := by[fam.Name]; f.Problem != "" || f.Steps < 2 || f.Missed() != 0 || f.Episodes != 2 || f.Won != 2 {
			t.Errorf("%s: %+v, want every step of its solution expressible, and both episodes won taking the steps as the heads express them", fam.Name, f)
		}
	}
	if want := fmt.Sprintf("0 of %d tasks have inexpressible steps", len(all)); !strings.Contains(out, want) {
		t.Errorf("totals line %q missing:\n%s", want, out)
	}

	two, err := catalog.SelectFamilies(catalog.SuiteBuiltin, []string{"copy-text", "find-and-report"})
	if err != nil {
		t.Fatal(err)
	}
	by, out = audit(two, 0)
	if f := by["find-and-report"]; f.Problem != "" || f.Inexpressible["fill: its text is not a candidate (nowhere the policy sees)"] != 6 {
		t.Errorf("find-and-report without memory: %+v, want its 3 fills a seed inexpressible, their values nowhere the policy sees", f)
	}
	if f := by["copy-text"]; f.Problem != "" || f.Steps != 4 || f.Missed() != 0 {
		t.Errorf("copy-text without memory: %+v, want it expressible (its code is on its own page)", f)
	}
	if !strings.Contains(out, "1 of 2 tasks have inexpressible steps") {
		t.Errorf("totals line missing:\n%s", out)
	}

	// MiniWoB++: every task with a scripted solver. The known steps the
	// heads cannot express (features v18): a colour the page shows only
	// as pixels, typed as its hex code (use-colorwheel-2), a word the
	// observation does not hold (scroll-text's last word, past the
	// textarea's value as the actor clips it), and a shell command typed
	// key by key (terminal: "ls", "rm <file>", which no page text says).
	var solved []catalog.FamilyInfo
	for _, f := range catalog.SuiteFamilies(catalog.SuiteMiniWoB) {
		if _, ok := oracle.SolverFor(f.Name); ok {
			solved = append(solved, f)
		}
	}
	if len(solved) != len(oracle.SolvedTasks()) {
		t.Fatalf("%d of the %d scripted solvers are for supported MiniWoB++ tasks", len(solved), len(oracle.SolvedTasks()))
	}
	by, out = audit(solved, actor.DefaultMemorySteps)
	for _, fam := range solved {
		if f := by[fam.Name]; f.Problem != "" || f.Steps < 2 || f.Missed() != 0 || f.Episodes != 2 {
			t.Errorf("%s: %+v, want every step of its solution expressible", fam.Name, f)
		}
	}
	if want := fmt.Sprintf("0 of %d tasks have inexpressible steps", len(solved)); !strings.Contains(out, want) {
		t.Errorf("totals line %q missing:\n%s", want, out)
	}
	t.Log("\n" + out)
}
