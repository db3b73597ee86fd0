package evalrun

import (
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// TestResultAdd: a MiniWoB++ episode the step budget cut scores −1, as
// the page's timeout would (the published tables' count); a built-in
// family's cut episode keeps its raw reward; strict success, raw > 0 and
// aborts are counted apart.
func TestResultAdd(t *testing.T) {
	r := NewResult()
	const mw, bi = "miniwob/click-test", "click-button"
	for _, rw := range []*eventspb.Reward{
		{Done: true, Success: true, RawReward: 1, DecayedReward: 0.9},
		{Done: true, Truncated: true, RawReward: 0, DecayedReward: 0},
		{Done: true, TimedOut: true, RawReward: -1, DecayedReward: -1},
		{Done: true, Success: true, RawReward: 0.1, DecayedReward: 0.05},
	} {
		r.Add(mw, rw)
	}
	r.Add(bi, &eventspb.Reward{Done: true, Truncated: true, RawReward: 0.5})
	r.Add(bi, &eventspb.Reward{Done: true, Aborted: true})
	if got, want := r.MeanRaw(mw), (1-1-1+0.1)/4; got != want {
		t.Errorf("MiniWoB++ score %v, want %v", got, want)
	}
	if got, want := r.MeanDecayed(mw), (0.9-1-1+0.05)/4; got != want {
		t.Errorf("decayed %v, want %v", got, want)
	}
	if r.Cut[mw] != 1 || r.TimedOut[mw] != 1 || r.Strict[mw] != 1 || r.Success[mw] != 2 {
		t.Errorf("counts: cut %d, timed out %d, strict %d, raw>0 %d", r.Cut[mw], r.TimedOut[mw], r.Strict[mw], r.Success[mw])
	}
	if r.MeanRaw(bi) != 0.25 || r.Cut[bi] != 0 || r.Aborted[bi] != 1 {
		t.Errorf("built-in: score %v, cut %d, aborted %d", r.MeanRaw(bi), r.Cut[bi], r.Aborted[bi])
	}
}
