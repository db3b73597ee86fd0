package env

import (
	"context"
	"fmt"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// pageJS evaluates js on the env's page (test code reading the layout, as
// a scripted solver may).
func pageJS(t *testing.T, e *Env, js string, out any) {
	t.Helper()
	tab, cancel := e.bind(context.Background())
	defer cancel()
	if err := e.eval(tab, js, out); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
}

// won fails unless r ended the episode with MiniWoB++'s full reward.
func won(t *testing.T, what string, r *StepResult) {
	t.Helper()
	if !r.Done || r.Info.Raw != 1 || !r.Info.Success {
		t.Fatalf("%s: done %v raw %v info %+v", what, r.Done, r.Info.Raw, r.Info)
	}
}

// gridCoordinateClick is grid-coordinate's scripted solution: the page
// draws point (x, y) at (30(x+2)+15, 30(2−y)+15) of its SVG, so the solver
// reads where the SVG is, not the circle.
func gridCoordinateClick(t *testing.T, e *Env, obs *Observation) Action {
	t.Helper()
	var gx, gy int
	if _, err := fmt.Sscanf(between(t, obs.Instruction, "Click on the grid coordinate ", "."), "(%d,%d)", &gx, &gy); err != nil {
		t.Fatalf("instruction %q: %v", obs.Instruction, err)
	}
	var svg struct{ Left, Top float64 }
	pageJS(t, e, `(() => { const r = document.querySelector('svg').getBoundingClientRect(); return {left: r.left, top: r.top}; })()`, &svg)
	return Action{Type: MouseClick, X: svg.Left + float64(30*(gx+2)+15), Y: svg.Top + float64(30*(2-gy)+15)}
}

// TestIntegrationMiniWoBMouseActions: the actions of issue 37 on the
// benchmark's own pages in real Chromium. Scripted solvers win grid-coordinate
// with a point click (no element is named) and drag-box with a drag from one
// element onto another (highlight-text's selecting drag is its scripted
// solver's, oracle's TestIntegrationMiniWoBSolvers); a hover is what hover-shape's page sees as one (its
// data-hover mark), and a double click fires the page's dblclick.
func TestIntegrationMiniWoBMouseActions(t *testing.T) {
	e, _ := miniwobEnv(t)
	const seeds = 5

	t.Run("grid-coordinate by mouse_click", func(t *testing.T) {
		for seed := int64(1); seed <= seeds; seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "grid-coordinate", Seed: seed})
			a := gridCoordinateClick(t, e, obs)
			won(t, fmt.Sprintf("seed %d %s", seed, a), step(t, e, a.String()))
		}
	})

	t.Run("drag-box by drag_and_drop", func(t *testing.T) {
		for seed := int64(1); seed <= seeds; seed++ {
			reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "drag-box", Seed: seed})
			small, err := e.QueryBID(context.Background(), "#draggableSmall", 0)
			if err != nil {
				t.Fatal(err)
			}
			large, err := e.QueryBID(context.Background(), "#draggableLarge", 0)
			if err != nil {
				t.Fatal(err)
			}
			// Centre onto centre: the small box (20 px) lands 15 px inside
			// the large one (50 px).
			if r := step(t, e, Action{Type: DragAndDrop, BID: small, ToBID: large}.String()); r.Info.Error != "" || r.Done {
				t.Fatalf("seed %d: the drag: %+v", seed, r.Info)
			}
			won(t, fmt.Sprintf("seed %d submit", seed), by(t, e, "#subbtn", click))
		}
	})

	t.Run("hover-shape sees the hover", func(t *testing.T) {
		reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "hover-shape", Seed: 1})
		bid, err := e.QueryBID(context.Background(), "#highlight", 0)
		if err != nil {
			t.Fatal(err)
		}
		if r := step(t, e, Action{Type: Hover, BID: bid}.String()); r.Info.Error != "" {
			t.Fatalf("hover: %+v", r.Info)
		}
		var mark string
		pageJS(t, e, `document.querySelector('#highlight') ? String(document.querySelector('#highlight').getAttribute('data-hover')) : 'moved'`, &mark)
		// The page moves its highlight every 2 s; a move since the hover
		// leaves "moved" or null on the new square, which says nothing.
		if mark != "true" && mark != "moved" {
			t.Fatalf("after hover(%q) the square's data-hover is %q, want true", bid, mark)
		}
	})

	t.Run("dblclick fires dblclick", func(t *testing.T) {
		// drag-box's large box ignores clicks: the double click is all
		// that happens.
		reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "drag-box", Seed: 1})
		var ok bool
		pageJS(t, e, `(() => { window.__dbl = 0; document.querySelector('#draggableLarge').addEventListener('dblclick', () => window.__dbl++); return true; })()`, &ok)
		bid, err := e.QueryBID(context.Background(), "#draggableLarge", 0)
		if err != nil {
			t.Fatal(err)
		}
		step(t, e, Action{Type: DblClick, BID: bid}.String())
		var n int
		pageJS(t, e, `window.__dbl || 0`, &n)
		if n != 1 {
			t.Fatalf("dblclick fired %d dblclick events, want 1", n)
		}
	})
}
