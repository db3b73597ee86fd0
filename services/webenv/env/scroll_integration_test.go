package env

import (
	"fmt"
	"testing"
)

// TestIntegrationScrollAt turns the wheel where a scroll aims it, in real
// Chromium, on click-in-list's page: a list of 12 to 20 items in a box
// that scrolls by itself. At a list item the list scrolls; at a point on
// the instruction, above the list, it does not.
func TestIntegrationScrollAt(t *testing.T) {
	h := newHarness(t)
	e := h.env(t)
	listTop := func() float64 {
		var top float64
		pageJS(t, e, `document.querySelector('.list-item').parentElement.scrollTop`, &top)
		return top
	}
	for seed := int64(1); seed <= 3; seed++ {
		task := TaskRef{Family: "click-in-list", Site: "cedar", Seed: seed}
		obs := reset(t, e, task)
		var item Element
		for _, el := range obs.Elements {
			if el.Role == "button" && el.InViewport {
				item = el
				break
			}
		}
		if item.BID == "" {
			t.Fatalf("seed %d: no list item in view: %+v", seed, obs.Elements)
		}
		if r := step(t, e, fmt.Sprintf(`scroll(0, 80, %q)`, item.BID)); r.Info.Error != "" {
			t.Fatalf("seed %d: %s", seed, r.Info.Error)
		}
		if top := listTop(); top <= 0 {
			t.Errorf("seed %d: the wheel at item %q left the list at scrollTop %v", seed, item.Text, top)
		}

		reset(t, e, task)
		if r := step(t, e, `scroll(0, 80, x=5, y=3)`); r.Info.Error != "" {
			t.Fatalf("seed %d: %s", seed, r.Info.Error)
		}
		if top := listTop(); top != 0 {
			t.Errorf("seed %d: the wheel above the list scrolled it to %v", seed, top)
		}
	}
}
