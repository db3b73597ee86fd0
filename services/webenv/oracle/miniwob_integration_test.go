package oracle

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// TestIntegrationMiniWoBSolvers plays every scripted MiniWoB++ solver on the
// benchmark's own pages in real Chromium (WEBENV_TABS tabs, 3 by
// default), three seeds each, and wants each
// episode won as the published tables count it (raw reward 1; at least 0.8
// on a task that grades a point by its distance, catalog.MiniWoBGraded),
// within the episode's time (a decayed reward in (0, 1]).
func TestIntegrationMiniWoBSolvers(t *testing.T) {
	testenv.Integration(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := webenv.New(webenv.WithSuite(catalog.SuiteMiniWoB), webenv.WithMiniWoBDir(testenv.MiniWoBDir(t)), webenv.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	b, err := env.LaunchBrowser(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	// Tabs of one Chromium play the tasks side by side (an episode mostly
	// waits on the page); a task's seeds run in a row on one tab, as the
	// MiniWoB++ harnesses restart a task on its open page.
	tabs := knob("WEBENV_TABS", 3)
	names := SolvedTasks()
	failures := make(map[string][]string, len(names))
	var mu sync.Mutex
	queue := make(chan string)
	var wg sync.WaitGroup
	for range tabs {
		e, err := env.New(ctx, b, ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		wg.Go(func() {
			for name := range queue {
				var msgs []string
				for seed := int64(1); seed <= 3; seed++ {
					p, err := SolveMiniWoB(ctx, e, env.TaskRef{Family: catalog.MiniWoBPrefix + name, Seed: seed}, nil)
					if err != nil {
						msgs = append(msgs, fmt.Sprintf("seed %d: %v", seed, err))
						break
					}
					i := p.Last.Info
					want := 1.0
					if catalog.MiniWoBGraded(name) {
						want = 0.8 // the best grid point is a pixel or two off
					}
					if i.Raw < want || !i.Success || i.TimedOut || i.Decayed <= 0 || i.Decayed > 1 {
						msgs = append(msgs, fmt.Sprintf("seed %d %q: %+v", seed, p.Obs.Instruction, i))
					}
				}
				mu.Lock()
				failures[name] = msgs
				mu.Unlock()
			}
		})
	}
	for _, name := range names {
		queue <- name
	}
	close(queue)
	wg.Wait()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			for _, msg := range failures[name] {
				t.Error(msg)
			}
		})
	}
	if _, ok := SolverFor("miniwob/no-such-task"); ok {
		t.Error("a solver for a task that does not exist")
	}
}
