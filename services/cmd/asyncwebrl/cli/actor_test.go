package cli

import (
	"slices"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// TestGeneratorFamilies: the actor's local task generator draws the run's
// -families, resolved in its suite as the curriculum resolves them, so an
// executor fed before the curriculum's first tasks never acts on a task
// the run does not train.
func TestGeneratorFamilies(t *testing.T) {
	got, err := generatorFamilies(" miniwob/click-button, click-option ", catalog.SuiteMiniWoB)
	if err != nil || !slices.Equal(got, []string{"miniwob/click-button", "miniwob/click-option"}) {
		t.Errorf("-families click-button,click-option on miniwob: %q, %v", got, err)
	}
	if got, err := generatorFamilies("", catalog.SuiteMiniWoB); err != nil || got != nil {
		t.Errorf("no -families: %q, %v; want nil (the suite's tasks)", got, err)
	}
	if _, err := generatorFamilies("miniwob/no-such-task", catalog.SuiteMiniWoB); err == nil {
		t.Error("an unknown task was accepted")
	}
}
