package env

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// TestIntegrationClickThroughHoverSwap clicks, in real Chromium, an icon
// whose image :hover swaps for one that is slow to arrive (testdata/hover):
// until it does, the hovered icon has no width and flickers under the
// pointer. The click must wait for a hovered hit, not press on the row
// around the icon. MiniWoB++'s social-media does the same with a hover
// image its server sends in milliseconds, which made its test flaky.
func TestIntegrationClickThroughHoverSwap(t *testing.T) {
	testenv.Integration(t)
	srv := newServer(t, webenv.WithThirdPartyDir("testdata/hover"))
	var slowed atomic.Int32
	h := srv.Handler()
	e := envOn(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/icon-hover.png") {
			slowed.Add(1)
			time.Sleep(150 * time.Millisecond)
		}
		h.ServeHTTP(w, r)
	}))

	const episodes = 5
	for ep := 1; ep <= episodes; ep++ {
		obs := reset(t, e, TaskRef{Family: "thirdparty/hover-swap", Seed: int64(ep)})
		var icon Element
		for _, el := range obs.Elements {
			if strings.Contains(el.Hint, "icon") {
				icon = el
			}
		}
		if icon.BID == "" {
			t.Fatalf("episode %d: no icon among %+v", ep, obs.Elements)
		}
		r := step(t, e, Action{Type: Click, BID: icon.BID}.String())
		if !r.Done || r.Info.Raw != 1 {
			t.Errorf("episode %d: clicking the icon %+v: done %v, %+v", ep, icon, r.Done, r.Info)
		}
	}
	if n := slowed.Load(); n < episodes {
		t.Fatalf("the hover image was asked for %d times in %d episodes: the hover never happened uncached", n, episodes)
	}
}
