package eventspb

import "testing"

// DeterministicID's ids are stored (transition and dead-letter ids, the
// joiner's golden files): its output must never change. These were computed
// by the hand-written formatter it had before it used google/uuid.
func TestDeterministicIDStable(t *testing.T) {
	cases := []struct {
		seed  string
		parts []string
		want  string
	}{
		{"learner-dlq", []string{"transitions", "3", "12345"}, "58ea7644-6680-8d64-834e-d699a5fc93ce"},
		{"", nil, "e3b0c442-98fc-8c14-9afb-f4c8996fb924"},
		{"abcd1234", []string{"ep-1", "7"}, "98995477-2d44-860b-8ebd-c31904d6f93f"},
	}
	for _, c := range cases {
		if got := DeterministicID(c.seed, c.parts...); got != c.want {
			t.Errorf("DeterministicID(%q, %q) = %s, want %s", c.seed, c.parts, got, c.want)
		}
	}
}
