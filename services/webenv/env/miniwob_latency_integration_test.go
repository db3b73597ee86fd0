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

// TestIntegrationMiniWoBTimeLimit: WithMiniWoBTimeLimit replaces the page's
// own episode time limit before the episode starts, the timer included:
// off (BrowserGym's 10^6 ms) lets a slow policy finish with a decayed
// reward near the raw one, a short limit ends the episode as the page's
// own timeout does, and without the option the page keeps its 10 s.
func TestIntegrationMiniWoBTimeLimit(t *testing.T) {
	testenv.Integration(t)
	srv := newServer(t, webenv.WithSuite(catalog.SuiteMiniWoB), webenv.WithMiniWoBDir(testenv.MiniWoBDir(t)))
	h := srv.Handler()
	task := TaskRef{Family: catalog.MiniWoBPrefix + "click-test", Seed: 1}
	limit := func(t *testing.T, e *Env) float64 {
		t.Helper()
		c, cancel := e.bind(t.Context())
		defer cancel()
		var ms float64
		if err := e.eval(c, `core.EPISODE_MAX_TIME`, &ms); err != nil {
			t.Fatal(err)
		}
		return ms
	}

	t.Run("off", func(t *testing.T) {
		e := envOn(t, h, WithMiniWoBTimeLimit(NoMiniWoBTimeLimit))
		reset(t, e, task)
		if ms := limit(t, e); ms != 1e6 {
			t.Fatalf("core.EPISODE_MAX_TIME = %v, want 10^6", ms)
		}
		r := by(t, e, "#subbtn", click)
		if !r.Done || !r.Info.Success || r.Info.Raw != 1 || r.Info.Decayed < 0.99 {
			t.Errorf("the click did not win with a decayed reward near 1: %+v", r.Info)
		}
	})
	t.Run("short", func(t *testing.T) {
		e := envOn(t, h, WithMiniWoBTimeLimit(200*time.Millisecond))
		reset(t, e, task)
		c, cancel := e.bind(t.Context())
		defer cancel()
		var st pageStatus
		for deadline := time.Now().Add(30 * time.Second); ; {
			var err error
			if st, err = e.status(c); err != nil {
				t.Fatal(err)
			}
			if st.Done || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !st.Done || st.Raw != -1 || st.Reason != "timed out" {
			t.Errorf("the page did not time out its episode: %+v", st)
		}
	})
	t.Run("page", func(t *testing.T) {
		e := envOn(t, h)
		reset(t, e, task)
		if ms := limit(t, e); ms != 10000 {
			t.Errorf("core.EPISODE_MAX_TIME = %v, want the page's own 10000", ms)
		}
	})
}

// TestIntegrationMiniWoBResetClearsFocus: an episode restarted on the same
// page (no reload) starts with nothing focused, as a freshly loaded page
// does; before 12-07 the button the last episode ended on stayed focused
// into the next episode's first observation.
func TestIntegrationMiniWoBResetClearsFocus(t *testing.T) {
	testenv.Integration(t)
	srv := newServer(t, webenv.WithSuite(catalog.SuiteMiniWoB), webenv.WithMiniWoBDir(testenv.MiniWoBDir(t)))
	e := envOn(t, srv.Handler())
	first := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "click-option", Seed: 1})
	if el := focusedElement(first); el != nil {
		t.Fatalf("a fresh page's first observation has %s %q focused", el.Role, el.Text)
	}
	if r := by(t, e, "#subbtn", click); !r.Done {
		t.Fatalf("submitting did not end the episode: %+v", r.Info)
	}
	next := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "click-option", Seed: 2})
	if next.URL != first.URL {
		t.Fatalf("the second episode opened %s, not the first's page %s: the test needs a restart without a reload", next.URL, first.URL)
	}
	if el := focusedElement(next); el != nil {
		t.Errorf("the next episode's first observation has %s %q focused (the last episode's)", el.Role, el.Text)
	}
}

func focusedElement(obs *Observation) *Element {
	for i := range obs.Elements {
		if obs.Elements[i].Focused {
			return &obs.Elements[i]
		}
	}
	return nil
}
