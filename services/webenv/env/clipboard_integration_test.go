package env

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// TestIntegrationClipboardPerTab: two tabs of one Chromium play MiniWoB++'s
// copy-paste with the keys a person uses, their copies and pastes
// interleaved (A copies, B copies, A pastes, B pastes). Each paste is its
// own tab's text and both episodes are won; on the browser's one shared
// clipboard, A pasted B's text.
func TestIntegrationClipboardPerTab(t *testing.T) {
	testenv.Integration(t)
	srv := newServer(t, webenv.WithSuite(catalog.SuiteMiniWoB), webenv.WithMiniWoBDir(testenv.MiniWoBDir(t)))
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := LaunchBrowser(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	tabs := make([]*Env, 2)
	for i := range tabs {
		if tabs[i], err = New(ctx, b, ts.URL); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tabs[i].Close() })
		reset(t, tabs[i], TaskRef{Family: catalog.MiniWoBPrefix + "copy-paste", Seed: int64(i + 1)})
	}
	want := make([]string, 2)
	for i, e := range tabs {
		c, cancel := e.bind(ctx)
		if err := e.eval(c, `document.querySelector('#to-copy').value`, &want[i]); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	if want[0] == want[1] {
		t.Fatalf("both seeds ask for %q: the test needs two texts", want[0])
	}
	for _, e := range tabs {
		by(t, e, "#to-copy", Action{Type: Press, Key: "Control+a"})
		by(t, e, "#to-copy", Action{Type: Press, Key: "Control+c"})
	}
	for i, e := range tabs {
		by(t, e, "#answer-input", Action{Type: Press, Key: "Control+v"})
		c, cancel := e.bind(ctx)
		var got string
		if err := e.eval(c, `document.querySelector('#answer-input').value`, &got); err != nil {
			t.Fatal(err)
		}
		cancel()
		if got != want[i] {
			t.Errorf("tab %d pasted %q, want its own copy %q", i, got, want[i])
		}
		if r := by(t, e, "#subbtn", Action{Type: Click}); !r.Done || r.Info.Raw != 1 {
			t.Errorf("tab %d: the episode was not won: %+v", i, r.Info)
		}
	}
}
