package topics

import "testing"

func TestMinInsyncReplicasFollowsReplication(t *testing.T) {
	for rf, want := range map[int16]string{1: "1", 2: "1", 3: "2", 5: "2"} {
		c := New(WithReplication(rf))
		for _, s := range c.Specs {
			if got := s.Configs()["min.insync.replicas"]; got != want {
				t.Fatalf("rf %d: %s has min.insync.replicas %s, want %s", rf, s.Name, got, want)
			}
		}
	}
}
