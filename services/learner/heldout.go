package learner

import (
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// heldOutTransition reports whether a transition belongs to a held-out
// episode, which measures the policy and is never trained on: a built-in
// family's test site (isHeldOut), a MiniWoB++ task's test seed (the split is
// by seed range, catalog.TaskSplit), or any episode its scheduler labelled
// test. Each check alone would do for the curriculum's own tasks; together
// they also catch a test episode assigned by hand (replay eval, a script)
// with the split left out.
func heldOutTransition(tr *eventspb.Transition) bool {
	task := tr.GetObs().GetTask()
	if task.GetSplit() == eventspb.Split_SPLIT_TEST || isHeldOut(tr.GetFamily(), tr.GetSite()) {
		return true
	}
	return catalog.IsMiniWoB(tr.GetFamily()) && catalog.TaskSplit(tr.GetFamily(), tr.GetSite(), task.GetSeed()) == catalog.SplitTest
}
