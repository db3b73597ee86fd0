package joiner

import (
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestCoPartitionGuard: the join is only correct when a member owns the
// same partition numbers of all three inputs; an assignment that breaks it
// is refused.
func TestCoPartitionGuard(t *testing.T) {
	cat := topics.New(topics.WithPrefix("g."))
	s, err := New(&config.Config{InstanceID: "t"}, nil, cat)
	if err != nil {
		t.Fatal(err)
	}
	ok := map[string][]int32{"g.obs": {2, 0}, "g.actions": {0, 2}, "g.rewards": {2, 0}}
	if err := s.checkCoPartitioned(ok); err != nil {
		t.Fatalf("co-partitioned assignment refused: %v", err)
	}
	bad := map[string][]int32{"g.obs": {0, 1}, "g.actions": {0, 1}, "g.rewards": {1, 2}}
	if err := s.checkCoPartitioned(bad); err == nil || !strings.Contains(err.Error(), "not co-partitioned") {
		t.Fatalf("broken assignment accepted: %v", err)
	}
	missing := map[string][]int32{"g.obs": {0}, "g.actions": {0}}
	if err := s.checkCoPartitioned(missing); err == nil {
		t.Fatal("an assignment without the rewards partition accepted")
	}
}
