package policyaudit

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// TestIntegrationPolicyAudit replays two families in real Chromium:
// click-button's one click is expressible; copy-text's fill types a value
// read off the page, which no text candidate holds until the text head can
// copy spans (issue 37), so the audit names that step and why.
func TestIntegrationPolicyAudit(t *testing.T) {
	testenv.Integration(t)
	fams, err := catalog.SelectFamilies(catalog.SuiteBuiltin, []string{"click-button", "copy-text"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	got, err := Audit(ctx, fams, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Finding{}
	for _, f := range got {
		by[f.Family] = f
	}
	if f := by["click-button"]; f.Problem != "" || f.Steps != 2 || f.Missed() != 0 {
		t.Errorf("click-button: %+v, want 2 expressible steps (one a seed)", f)
	}
	if f := by["copy-text"]; f.Problem != "" || f.Inexpressible["fill: its text is not a candidate (in an element's context)"] != 2 {
		t.Errorf("copy-text: %+v, want its fill (one a seed) inexpressible: its text, the code on the card, is only in the input's context", f)
	}
	var b bytes.Buffer
	if err := Print(&b, got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "1 of 2 tasks have inexpressible steps") {
		t.Errorf("totals line missing:\n%s", b.String())
	}
}
