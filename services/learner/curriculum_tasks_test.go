package learner

import (
	"io"
	"log/slog"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/oracle"
)

// TestCurriculumSuites checks the task choice of each suite: what families
// are drawn, on which split, with which seeds, and that no MiniWoB++ task
// the action space cannot express is ever issued.
func TestCurriculumSuites(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name             string
		cfg              CurriculumConfig
		builtin, miniwob bool // families of each kind issued
		demos            int
	}{
		{"builtin", CurriculumConfig{Demos: 2}, true, false, 2},
		{"miniwob", CurriculumConfig{Suite: catalog.SuiteMiniWoB, Demos: 2}, false, true, 2},
		{"miniwob easy", CurriculumConfig{Suite: catalog.SuiteMiniWoB, MaxTier: catalog.Easy}, false, true, 0},
		{"all", CurriculumConfig{Suite: catalog.SuiteAll, Demos: 2}, true, true, 2},
		{"miniwob tasks", CurriculumConfig{Suite: catalog.SuiteMiniWoB, Families: []string{"miniwob/click-test", "miniwob/enter-text"}}, false, true, 0},
		// Medium tasks only: no tier below the frontier to revisit (the
		// scheduler looped forever stepping down from the empty easy tier).
		{"miniwob medium tasks", CurriculumConfig{Suite: catalog.SuiteMiniWoB, MaxTier: catalog.Medium, Demos: 2, Families: []string{"miniwob/click-checkboxes-large", "miniwob/ascending-numbers"}}, false, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.EvalFraction, tc.cfg.Seed = 0.3, 7
			cu, err := newCurriculum(tc.cfg, log)
			if err != nil {
				t.Fatal(err)
			}
			var builtin, miniwob, eval, train, demos int
			for range 2000 {
				for _, task := range cu.pick() {
					f, ok := catalog.LookupFamily(task.GetFamily())
					if !ok {
						t.Fatalf("unknown family %q issued", task.GetFamily())
					}
					if f.Unsupported != "" {
						t.Fatalf("unsupported task %s issued (%s)", f.Name, f.Unsupported)
					}
					if tc.cfg.MaxTier != 0 && f.Tier > tc.cfg.MaxTier {
						t.Fatalf("%s of tier %s above the max tier", f.Name, f.Tier)
					}
					if len(tc.cfg.Families) > 0 && f.Name != tc.cfg.Families[0] && f.Name != tc.cfg.Families[1] {
						t.Fatalf("%s issued outside %v", f.Name, tc.cfg.Families)
					}
					if eventspb.Tier(f.Tier) != task.GetTier() {
						t.Errorf("%s issued as tier %v, want %s (miniwob.go)", f.Name, task.GetTier(), f.Tier)
					}
					split := catalog.TaskSplit(task.GetFamily(), task.GetSite(), task.GetSeed())
					switch {
					case task.GetDemo():
						demos++
						if _, ok := oracle.SolverFor(f.Name); catalog.IsMiniWoB(f.Name) && !ok {
							t.Errorf("a demonstration of %s, which has no scripted solver", f.Name)
						}
						if split != catalog.SplitTrain {
							t.Errorf("a demonstration of %s on the %s split", task.GetTaskId(), split)
						}
					case task.GetSplit() == eventspb.Split_SPLIT_TEST:
						eval++
						if !task.GetGreedy() || split != catalog.SplitTest {
							t.Errorf("eval task %s (seed %d): greedy %v, split %q; want greedy on the test split", task.GetTaskId(), task.GetSeed(), task.GetGreedy(), split)
						}
					default:
						train++
						if task.GetGreedy() || split != catalog.SplitTrain {
							t.Errorf("training task %s (seed %d): greedy %v, split %q; want sampled on the train split", task.GetTaskId(), task.GetSeed(), task.GetGreedy(), split)
						}
					}
					if catalog.IsMiniWoB(f.Name) {
						miniwob++
						if task.GetSite() != catalog.MiniWoBSite {
							t.Errorf("%s on site %q", task.GetTaskId(), task.GetSite())
						}
					} else {
						builtin++
					}
				}
			}
			if (builtin > 0) != tc.builtin || (miniwob > 0) != tc.miniwob {
				t.Errorf("%d built-in and %d MiniWoB++ tasks; want built-in %v, MiniWoB++ %v", builtin, miniwob, tc.builtin, tc.miniwob)
			}
			if demos != tc.demos || eval == 0 || train == 0 {
				t.Errorf("%d demos, %d eval, %d training tasks; want %d demos and both others", demos, eval, train, tc.demos)
			}
		})
	}
}

// TestCurriculumFocus checks that with Focus a family that keeps failing is
// drawn more often than one that succeeds, and at most 1 + Focus times as
// often.
func TestCurriculumFocus(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	solved, unsolved := "miniwob/click-test", "miniwob/click-button"
	for _, tc := range []struct {
		focus    float64
		min, max float64 // bounds on draws(unsolved) / draws(solved)
	}{
		{-1, 0.8, 1.25}, // uniform
		{1, 1.6, 2.5},   // weights 2 and 1
		{3, 3.2, 5},     // weights 4 and 1
	} {
		cu, err := newCurriculum(CurriculumConfig{Suite: catalog.SuiteMiniWoB, Families: []string{solved, unsolved}, EvalFraction: 0.01, Focus: tc.focus, Seed: 3}, log)
		if err != nil {
			t.Fatal(err)
		}
		for range familyWindow {
			cu.finished(&eventspb.Episode{Family: solved, Split: eventspb.Split_SPLIT_TRAIN, Tier: eventspb.Tier_TIER_EASY, Success: true})
			cu.finished(&eventspb.Episode{Family: unsolved, Split: eventspb.Split_SPLIT_TRAIN, Tier: eventspb.Tier_TIER_EASY, Success: false})
		}
		// Held-out and aborted episodes never weigh.
		for range 50 {
			cu.finished(&eventspb.Episode{Family: unsolved, Split: eventspb.Split_SPLIT_TEST, Tier: eventspb.Tier_TIER_EASY, Success: true})
			cu.finished(&eventspb.Episode{Family: unsolved, Split: eventspb.Split_SPLIT_TRAIN, Tier: eventspb.Tier_TIER_EASY, Success: true, Aborted: true})
		}
		n := map[string]float64{}
		for range 20000 {
			for _, task := range cu.pick() {
				if task.GetSplit() == eventspb.Split_SPLIT_TRAIN {
					n[task.GetFamily()]++
				}
			}
		}
		if r := n[unsolved] / n[solved]; r < tc.min || r > tc.max {
			t.Errorf("focus %v: unsolved drawn %.2f times as often as solved; want [%v, %v]", tc.focus, r, tc.min, tc.max)
		}
	}
}

// TestCurriculumFocusSpread checks FocusSpread: a family whose episodes
// disagree (half won) is drawn far more often than one always won or
// always lost (GRPO's groups of those teach nothing), those two alike, and
// a family with too few episodes to know is drawn as a disagreeing one.
func TestCurriculumFocusSpread(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	won, lost, mixed, fresh := "miniwob/click-test", "miniwob/click-option", "miniwob/click-link", "miniwob/click-button"
	cu, err := newCurriculum(CurriculumConfig{Suite: catalog.SuiteMiniWoB, Families: []string{won, lost, mixed, fresh}, EvalFraction: 0.01, FocusBy: FocusSpread, Seed: 5}, log)
	if err != nil {
		t.Fatal(err)
	}
	for i := range familyWindow {
		cu.finished(&eventspb.Episode{Family: won, Split: eventspb.Split_SPLIT_TRAIN, Tier: eventspb.Tier_TIER_EASY, Success: true})
		cu.finished(&eventspb.Episode{Family: lost, Split: eventspb.Split_SPLIT_TRAIN, Tier: eventspb.Tier_TIER_EASY, Success: false})
		cu.finished(&eventspb.Episode{Family: mixed, Split: eventspb.Split_SPLIT_TRAIN, Tier: eventspb.Tier_TIER_EASY, Success: i%2 == 0})
	}
	for range familyWindow/2 - 1 {
		cu.finished(&eventspb.Episode{Family: fresh, Split: eventspb.Split_SPLIT_TRAIN, Tier: eventspb.Tier_TIER_EASY, Success: true})
	}
	n := map[string]float64{}
	for range 40000 {
		for _, task := range cu.pick() {
			if task.GetSplit() == eventspb.Split_SPLIT_TRAIN {
				n[task.GetFamily()]++
			}
		}
	}
	// Weights (the default Focus 3 of a MiniWoB++ suite): mixed and fresh
	// 4, won and lost 0.25.
	for _, c := range []struct {
		a, b     string
		min, max float64
	}{{mixed, won, 12, 20}, {mixed, lost, 12, 20}, {won, lost, 0.75, 1.33}, {fresh, mixed, 0.85, 1.18}} {
		if r := n[c.a] / n[c.b]; r < c.min || r > c.max {
			t.Errorf("%s drawn %.2f times as often as %s; want [%v, %v] (draws %v)", c.a, r, c.b, c.min, c.max, n)
		}
	}
	if _, err := newCurriculum(CurriculumConfig{Suite: catalog.SuiteMiniWoB, FocusBy: "variance"}, log); err == nil {
		t.Error("an unknown focus was accepted")
	}
}

// TestCurriculumPatience checks that a family failing Patience training
// episodes in a row is drawn with StuckWeight, below a solved one, and
// regains its focus weight with its next success.
func TestCurriculumPatience(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	solved, stuck := "miniwob/click-test", "miniwob/click-pie"
	cu, err := newCurriculum(CurriculumConfig{Suite: catalog.SuiteMiniWoB, Families: []string{solved, stuck}, EvalFraction: 0.01, Seed: 5}, log)
	if err != nil {
		t.Fatal(err)
	}
	if cu.c.Patience != 40 || cu.c.Focus != 3 || cu.c.StuckWeight != 0.25 || cu.c.MinPractice != 150 {
		t.Fatalf("MiniWoB++ defaults: patience %d, focus %v, stuck weight %v, min practice %d; want 40, 3, 0.25, 150",
			cu.c.Patience, cu.c.Focus, cu.c.StuckWeight, cu.c.MinPractice)
	}
	ep := func(fam string, ok bool) {
		cu.finished(&eventspb.Episode{Family: fam, Split: eventspb.Split_SPLIT_TRAIN, Tier: eventspb.Tier_TIER_EASY, Success: ok})
	}
	ratio := func() float64 {
		n := map[string]float64{}
		for range 20000 {
			for _, task := range cu.pick() {
				if task.GetSplit() == eventspb.Split_SPLIT_TRAIN {
					n[task.GetFamily()]++
				}
			}
		}
		return n[stuck] / n[solved]
	}
	for range familyWindow {
		ep(solved, true)
	}
	for range 39 {
		ep(stuck, false)
	}
	if r := ratio(); r < 3.2 || r > 5 {
		t.Errorf("39 failures (not yet stuck): drawn %.2f times as often as the solved family; want about 4", r)
	}
	ep(stuck, false)
	if r := ratio(); r < 0.8 || r > 1.25 {
		t.Errorf("40 failures in its first 40 episodes (not yet practised): drawn %.2f times as often as the solved family; want about 1", r)
	}
	for range 150 - 40 {
		ep(stuck, false)
	}
	if r := ratio(); r < 0.18 || r > 0.33 {
		t.Errorf("150 failures (stuck): drawn %.2f times as often as the solved family; want about 0.25", r)
	}
	ep(stuck, true)
	if r := ratio(); r < 3 || r > 5 {
		t.Errorf("after a success: drawn %.2f times as often as the solved family; want about 1+3×0.95", r)
	}
}

func TestHeldOutTransition(t *testing.T) {
	test := catalog.TestSite("click-button")
	train := catalog.TrainSites(catalog.Families()[0])[0]
	trainFam := catalog.Families()[0].Name
	mk := func(family, site string, seed int64, split eventspb.Split) *eventspb.Transition {
		return &eventspb.Transition{Family: family, Site: site,
			Obs: &eventspb.Observation{Task: &eventspb.TaskRef{Family: family, Site: site, Seed: seed, Split: split}}}
	}
	for _, tc := range []struct {
		name string
		tr   *eventspb.Transition
		want bool
	}{
		{"built-in test site", mk("click-button", test, 5, eventspb.Split_SPLIT_TEST), true},
		{"built-in test site, split left out", mk("click-button", test, 5, eventspb.Split_SPLIT_UNSPECIFIED), true},
		{"built-in train site", mk(trainFam, train, 5, eventspb.Split_SPLIT_TRAIN), false},
		{"miniwob train seed", mk("miniwob/click-test", catalog.MiniWoBSite, catalog.MiniWoBSeed(catalog.SplitTrain, 9), eventspb.Split_SPLIT_TRAIN), false},
		{"miniwob test seed", mk("miniwob/click-test", catalog.MiniWoBSite, catalog.MiniWoBSeed(catalog.SplitTest, 9), eventspb.Split_SPLIT_TEST), true},
		{"miniwob test seed labelled train", mk("miniwob/click-test", catalog.MiniWoBSite, catalog.MiniWoBSeed(catalog.SplitTest, 9), eventspb.Split_SPLIT_TRAIN), true},
		{"miniwob train seed labelled test", mk("miniwob/click-test", catalog.MiniWoBSite, 9, eventspb.Split_SPLIT_TEST), true},
		{"miniwob seed outside both ranges", mk("miniwob/click-test", catalog.MiniWoBSite, 0, eventspb.Split_SPLIT_UNSPECIFIED), true},
	} {
		if got := heldOutTransition(tc.tr); got != tc.want {
			t.Errorf("%s: held out %v, want %v", tc.name, got, tc.want)
		}
	}
}
