package actor

import (
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// TestLocalTasksOfASuite checks the local generator under each suite: which
// families it draws, that a MiniWoB++ task gets train seeds only, and that
// a task beyond the action space is refused rather than failed silently.
func TestLocalTasksOfASuite(t *testing.T) {
	for _, tc := range []struct {
		name             string
		opts             []Option
		builtin, miniwob int
		wantErr          string
	}{
		{"default", nil, len(catalog.Families()), 0, ""},
		{"builtin", []Option{WithSuite(catalog.SuiteBuiltin)}, len(catalog.Families()), 0, ""},
		{"miniwob", []Option{WithSuite(catalog.SuiteMiniWoB)}, 0, len(catalog.Schedulable(catalog.SuiteMiniWoB)), ""},
		{"all", []Option{WithSuite(catalog.SuiteAll)}, len(catalog.Families()), len(catalog.Schedulable(catalog.SuiteMiniWoB)), ""},
		{"families win", []Option{WithFamilies("miniwob/click-test", "click-button"), WithSuite(catalog.SuiteMiniWoB)}, 1, 1, ""},
		{"families after the suite", []Option{WithSuite(catalog.SuiteAll), WithFamilies("miniwob/enter-text")}, 0, 1, ""},
		{"unsupported", []Option{WithFamilies("miniwob/draw-circle")}, 0, 0, "beyond the action space: needs a curved mouse path"},
		{"unknown task", []Option{WithFamilies("miniwob/no-such-task")}, 0, 0, "unknown family"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := defaultOptions()
			for _, opt := range tc.opts {
				opt(&o)
			}
			g, err := newLocalTasks("a", o.families, 0)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fams := map[string]bool{}
			for range 3 * len(g.pairs) {
				task := g.next()
				if err := eventspb.Validate(task); err != nil {
					t.Fatal(err)
				}
				ref := taskRef(task)
				if ref.GetSplit() != eventspb.Split_SPLIT_TRAIN || catalog.TaskSplit(task.GetFamily(), task.GetSite(), task.GetSeed()) != catalog.SplitTrain {
					t.Fatalf("task %s (seed %d) is not on the train split", task.GetTaskId(), task.GetSeed())
				}
				f, ok := catalog.LookupFamily(task.GetFamily())
				if !ok || f.Unsupported != "" || ref.GetTier() != tierOf(f.Tier) {
					t.Fatalf("task %s: family known %v, unsupported %q, tier %v", task.GetTaskId(), ok, f.Unsupported, ref.GetTier())
				}
				fams[task.GetFamily()] = true
			}
			var builtin, miniwob int
			for f := range fams {
				if catalog.IsMiniWoB(f) {
					miniwob++
				} else {
					builtin++
				}
			}
			if builtin != tc.builtin || miniwob != tc.miniwob {
				t.Errorf("%d built-in and %d MiniWoB++ families drawn, want %d and %d", builtin, miniwob, tc.builtin, tc.miniwob)
			}
		})
	}
	// A MiniWoB++ assignment without a split (a hand-written task) is
	// labelled by its seed.
	ref := taskRef(&eventspb.Task{TaskId: "x", Family: "miniwob/click-test", Site: catalog.MiniWoBSite, Seed: catalog.MiniWoBSeed(catalog.SplitTest, 4)})
	if ref.GetSplit() != eventspb.Split_SPLIT_TEST || ref.GetTier() != eventspb.Tier_TIER_EASY {
		t.Errorf("a test-seed MiniWoB++ task is labelled %v, %v; want test, easy", ref.GetSplit(), ref.GetTier())
	}
}
