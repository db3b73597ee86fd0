package env

import (
	"fmt"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// asHeads returns a as the policy's heads express it from obs: the
// observation featurized, a mapped to head indices (ChoiceOf: a point to
// the cell that holds it) and back (ActionOf: the cell's centre). The
// frame of policyObservation is the viewport's PNG, so its pixels are CSS
// pixels and the action needs no scaling.
func asHeads(t *testing.T, arch *policy.Architecture, obs *Observation, a Action) Action {
	t.Helper()
	want, err := action.ToProto(a)
	if err != nil {
		t.Fatal(err)
	}
	f, err := arch.Featurize(policyObservation(obs))
	if err != nil {
		t.Fatal(err)
	}
	c, err := arch.ChoiceOf(f, want)
	if err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	got, err := arch.ActionOf(f, c)
	if err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	out, err := action.FromProto(got)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestIntegrationMiniWoBPointHead: the point head's cells (16x16 over the
// frame, about 10x13 CSS pixels of a MiniWoB++ page) are fine enough to win
// the point and drag tasks: the scripted solvers' points, taken as the
// heads express them (each moved to its cell's centre), still win
// grid-coordinate by a point click and drag-box by a drag from the small
// box's cell to the large one's, and a mouse_move hovers hover-shape's
// square, which no kept element covers.
func TestIntegrationMiniWoBPointHead(t *testing.T) {
	e, _ := miniwobEnv(t)
	arch := policy.DefaultArchitecture()
	const seeds = 5

	t.Run("grid-coordinate", func(t *testing.T) {
		for seed := int64(1); seed <= seeds; seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "grid-coordinate", Seed: seed})
			a := asHeads(t, &arch, obs, gridCoordinateClick(t, e, obs))
			won(t, fmt.Sprintf("seed %d %s", seed, a), step(t, e, a.String()))
		}
	})

	t.Run("drag-box", func(t *testing.T) {
		for seed := int64(1); seed <= seeds; seed++ {
			obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "drag-box", Seed: seed})
			var box struct{ X0, Y0, X1, Y1 float64 }
			pageJS(t, e, `(() => {
				const c = s => { const r = document.querySelector(s).getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; };
				const [x0, y0] = c('#draggableSmall'), [x1, y1] = c('#draggableLarge');
				return {x0, y0, x1, y1};
			})()`, &box)
			a := asHeads(t, &arch, obs, Action{Type: MouseDragAndDrop, X: box.X0, Y: box.Y0, ToX: box.X1, ToY: box.Y1})
			r := step(t, e, a.String())
			if r.Info.Error != "" || r.Done {
				t.Fatalf("seed %d %s: %+v", seed, a, r.Info)
			}
			won(t, fmt.Sprintf("seed %d submit after %s", seed, a), by(t, e, "#subbtn", click))
		}
	})

	t.Run("hover-shape", func(t *testing.T) {
		// The square is a bare div the page's elements leave out: the
		// point head's mouse_move hovers where no element is kept.
		obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + "hover-shape", Seed: 1})
		var sq struct{ X, Y float64 }
		pageJS(t, e, `(() => { const r = document.querySelector('#highlight').getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`, &sq)
		a := asHeads(t, &arch, obs, Action{Type: MouseMove, X: sq.X, Y: sq.Y})
		if r := step(t, e, a.String()); r.Info.Error != "" {
			t.Fatalf("%s: %+v", a, r.Info)
		}
		var mark string
		pageJS(t, e, `document.querySelector('#highlight') ? String(document.querySelector('#highlight').getAttribute('data-hover')) : 'moved'`, &mark)
		// The page moves its highlight every 2 s: "moved" or null on the
		// new square says nothing.
		if mark != "true" && mark != "moved" {
			t.Fatalf("after %s the square's data-hover is %q, want true", a, mark)
		}
	})
}
