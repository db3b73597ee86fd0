package bench

import (
	"slices"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// With no task set named, bench train runs the long-task set with the flags
// it was measured with, leaving each flag the caller gave alone; naming a
// set in any of the four ways keeps the caller's.
func TestLongTaskDefaults(t *testing.T) {
	for _, env := range []string{"SUITE", "FAMILIES", "DEMOS", "BC_UPDATES", "MAX_POLICY_LAG", "MINIWOB_TIME_LIMIT"} {
		t.Setenv("ASYNCWEBRL_"+env, "")
	}
	for _, c := range []struct {
		name     string
		vals     map[string]string
		rest     []string
		wantArgs []string
		wantTier catalog.Tier
		applied  bool
	}{
		{"nothing named", nil, []string{"-executors=24"},
			[]string{"-suite=miniwob", "-families=" + longTasks, "-miniwob-time-limit=off", "-demos=12", "-bc-updates=40", "-max-policy-lag=4", "-executors=24"},
			catalog.Medium, true},
		{"the caller's learner flags kept", nil, []string{"-demos=0", "-max-policy-lag", "0"},
			[]string{"-suite=miniwob", "-families=" + longTasks, "-miniwob-time-limit=off", "-bc-updates=40", "-demos=0", "-max-policy-lag", "0"},
			catalog.Medium, true},
		{"--tasks", map[string]string{"tasks": "miniwob/click-button"}, []string{"-suite=miniwob"},
			[]string{"-suite=miniwob"}, catalog.Easy, false},
		{"--tier", map[string]string{"tier": "easy"}, nil, nil, catalog.Easy, false},
		{"-suite", nil, []string{"-suite=builtin"}, []string{"-suite=builtin"}, catalog.Easy, false},
		{"-families", nil, []string{"-families", "login-form"}, []string{"-families", "login-form"}, catalog.Easy, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, tier, applied := applyLongTaskDefaults(c.vals, c.rest, catalog.Easy)
			if !slices.Equal(got, c.wantArgs) || tier != c.wantTier || applied != c.applied {
				t.Errorf("got %q, tier %s, applied %v; want %q, tier %s, applied %v", got, tier, applied, c.wantArgs, c.wantTier, c.applied)
			}
		})
	}
	// The environment names a suite as the arguments do.
	t.Setenv("ASYNCWEBRL_SUITE", "builtin")
	if _, _, applied := applyLongTaskDefaults(nil, nil, catalog.Easy); applied {
		t.Error("ASYNCWEBRL_SUITE=builtin: the long-task set applied, want the named suite's families")
	}
}
