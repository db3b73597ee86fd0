package env

import (
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// TestIntegrationMiniWoBRequestPerAction: under a latency profile a
// MiniWoB++ page's reset and actions each wait for one request the server
// delays by the profile's draw (issue 38: the profile means the same on
// both suites); without the option the pages make none.
func TestIntegrationMiniWoBRequestPerAction(t *testing.T) {
	testenv.Integration(t)
	prof, err := webenv.ParseProfile("fixed:150ms")
	if err != nil {
		t.Fatal(err)
	}
	pages := &pageCounter{n: map[string]int{}}
	srv := newServer(t, webenv.WithSuite(catalog.SuiteMiniWoB), webenv.WithMiniWoBDir(testenv.MiniWoBDir(t)), webenv.WithProfile(prof))
	h := pages.wrap(srv.Handler())
	task := TaskRef{Family: catalog.MiniWoBPrefix + "click-test", Seed: 1}

	t.Run("with the option", func(t *testing.T) {
		e := envOn(t, h, WithRequestPerAction(true))
		before := pages.get("/api/wait")
		reset(t, e, task)
		if n := pages.get("/api/wait") - before; n != 1 {
			t.Fatalf("the reset made %d requests, want 1", n)
		}
		r := by(t, e, "#subbtn", click)
		if n := pages.get("/api/wait") - before; n != 2 {
			t.Errorf("the reset and one click made %d requests, want 2", n)
		}
		if r.Info.NetDelay != 150*time.Millisecond {
			t.Errorf("the click's request was delayed %s, want the profile's 150ms", r.Info.NetDelay)
		}
		if !r.Done || !r.Info.Success {
			t.Errorf("the click on the button did not win the episode: %+v", r.Info)
		}
	})
	t.Run("without it", func(t *testing.T) {
		e := envOn(t, h)
		before := pages.get("/api/wait")
		reset(t, e, task)
		r := by(t, e, "#subbtn", click)
		if n := pages.get("/api/wait") - before; n != 0 || r.Info.NetDelay != 0 {
			t.Errorf("%d requests, delay %s: want none", n, r.Info.NetDelay)
		}
	})
}
