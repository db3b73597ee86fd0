package evalrun

import (
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// TestTask checks what one evaluation episode asks of the actors: the
// held-out seeds, and greedy actions unless the model is sampled (the
// random-init baseline).
func TestTask(t *testing.T) {
	fams, err := catalog.SelectFamilies(catalog.SuiteMiniWoB, []string{"click-test"})
	if err != nil || len(fams) != 1 {
		t.Fatalf("SelectFamilies: %v, %d families", err, len(fams))
	}
	f := fams[0]
	greedy := Task(f, 700000, "default", false)
	sampled := Task(f, 700000, "random-init", true)
	if !greedy.GetGreedy() || sampled.GetGreedy() {
		t.Fatalf("greedy: %v (want true), sampled: %v (want false)", greedy.GetGreedy(), sampled.GetGreedy())
	}
	if want := catalog.MiniWoBSeed(catalog.SplitTest, 700000); greedy.GetSeed() != want || sampled.GetSeed() != want {
		t.Fatalf("seeds %d and %d, want the test seed %d for both models", greedy.GetSeed(), sampled.GetSeed(), want)
	}
	if catalog.MiniWoBSeedSplit(greedy.GetSeed()) != catalog.SplitTest {
		t.Fatalf("seed %d is not a test seed", greedy.GetSeed())
	}
	if greedy.GetEnvelope().GetEpisodeId() == sampled.GetEnvelope().GetEpisodeId() {
		t.Fatalf("both models' episodes are named %q", greedy.GetEnvelope().GetEpisodeId())
	}
	if greedy.GetPolicyName() != "default" || sampled.GetPolicyName() != "random-init" {
		t.Fatalf("policies %q and %q", greedy.GetPolicyName(), sampled.GetPolicyName())
	}
}
