package loadtest

import "testing"

func TestCheckVersions(t *testing.T) {
	chain := func(pairs ...uint64) []Version {
		var vs []Version
		for i := 0; i < len(pairs); i += 2 {
			vs = append(vs, Version{Version: pairs[i], Parent: pairs[i+1], Producer: "l"})
		}
		return vs
	}
	for _, tc := range []struct {
		name                      string
		vs                        []Version
		ok                        bool
		skipped, repeated, forked int
	}{
		{"chain", chain(1, 0, 2, 1, 3, 2), true, 0, 0, 0},
		{"none", nil, false, 0, 0, 0},
		{"skip", chain(1, 0, 3, 2), false, 1, 0, 0},
		{"repeat", chain(1, 0, 2, 1, 2, 1), false, 0, 1, 0},
		{"fork", chain(1, 0, 2, 1, 3, 1), false, 0, 0, 1},
	} {
		c := CheckVersions(tc.vs)
		if c.OK() != tc.ok || c.Skipped != tc.skipped || c.Repeated != tc.repeated || c.BadParents != tc.forked {
			t.Errorf("%s: %s; want ok %v, %d skipped, %d repeated, %d forked", tc.name, c, tc.ok, tc.skipped, tc.repeated, tc.forked)
		}
		if v := c.Verdict("weights"); v.OK() != tc.ok && len(tc.vs) > 0 {
			t.Errorf("%s: verdict %+v OK %v, want %v", tc.name, v, v.OK(), tc.ok)
		}
	}
}
