package dashboard

import (
	"fmt"
	"testing"
)

// TestStepsMarkWhatWasActedOn: a step's view carries the acted element's
// box, a point action's point, and a drag's release point, for the episode
// page to draw.
func TestStepsMarkWhatWasActedOn(t *testing.T) {
	obs := []obsRow{
		{EventID: "o0", Step: 0, Bids: []string{"a", "b"}, Boxes: [][]float32{{1, 2, 3, 4}, {5, 6, 7, 8}}},
		{EventID: "o1", Step: 1},
		{EventID: "o2", Step: 2},
	}
	actions := []actionRow{
		{Step: 0, ObsEventID: "o0", Raw: `click("b")`, Type: "click", Bid: "b"},
		{Step: 1, ObsEventID: "o1", Raw: "mouse_click(10, 20)", Type: "mouse_click", X: 10, Y: 20},
		{Step: 2, ObsEventID: "o2", Raw: "mouse_drag_and_drop(10, 20, 30, 40)", Type: "mouse_drag_and_drop", X: 10, Y: 20, ToX: 30, ToY: 40},
	}
	got := steps(obs, actions, nil, nil)
	for i, want := range []struct{ box, point, to string }{
		{"[5 6 7 8]", "[]", "[]"},
		{"[]", "[10 20]", "[]"},
		{"[]", "[10 20]", "[30 40]"},
	} {
		s := got[i]
		if fmt.Sprint(s.Box) != want.box || fmt.Sprint(s.Point) != want.point || fmt.Sprint(s.To) != want.to {
			t.Errorf("step %d (%s): box %v point %v to %v, want %s %s %s", i, s.Action, s.Box, s.Point, s.To, want.box, want.point, want.to)
		}
	}
}
