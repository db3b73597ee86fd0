package learner

import (
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/oracle"
)

// familyWindow is the number of recent training episodes of a family whose
// success weights its draws (CurriculumConfig.Focus): short, so that a family
// just learnt stops drawing extra practice within a few minutes, long enough
// that one lucky episode does not.
const familyWindow = 20

// The values of CurriculumConfig.FocusBy.
const (
	FocusFailure = "failure"
	FocusSpread  = "spread"
)

// spreadWeight is a family's draw weight under FocusSpread: 1 + focus
// while its window holds fewer than half of familyWindow episodes (not
// yet known), then 0.25 + (0.75 + focus)·4p(1−p), p its success over the
// window: 1 + focus at p = ½, 0.25 for a family always won or always
// lost, which stays drawn so that a first success (or a loss) is seen.
func spreadWeight(w []bool, focus float64) float64 {
	if len(w) < familyWindow/2 {
		return 1 + focus
	}
	p := rate(w)
	return 0.25 + (0.75+focus)*4*p*(1-p)
}

// window appends ok to w and keeps its last n entries.
func window(w []bool, ok bool, n int) []bool {
	w = append(w, ok)
	if len(w) > n {
		w = w[len(w)-n:]
	}
	return w
}

// drawFamily draws a training family of a tier: uniformly when Focus is 0,
// else each weighted by 1 + Focus × (1 − its recent training success), a
// family never trained yet counting as unsolved, and one stuck (its last
// Patience training episodes failed) by StuckWeight once it had MinPractice
// training episodes, by 1 before. The caller holds cu.mu.
func (cu *curriculum) drawFamily(tier catalog.Tier) catalog.FamilyInfo {
	fams := cu.fams[tier]
	if cu.c.Focus == 0 {
		return fams[cu.rng.IntN(len(fams))]
	}
	weights := make([]float64, len(fams))
	total := 0.0
	for i, f := range fams {
		if cu.c.FocusBy == FocusSpread {
			weights[i] = spreadWeight(cu.byFamily[f.Name], cu.c.Focus)
			total += weights[i]
			continue
		}
		weights[i] = 1 + cu.c.Focus*(1-rate(cu.byFamily[f.Name]))
		if cu.c.Patience > 0 && cu.failStreak[f.Name] >= cu.c.Patience {
			weights[i] = 1 // not stuck before it had its practice
			if cu.practiced[f.Name] >= cu.c.MinPractice {
				weights[i] = cu.c.StuckWeight
			}
		}
		total += weights[i]
	}
	x := cu.rng.Float64() * total
	for i, w := range weights {
		if x < w {
			return fams[i]
		}
		x -= w
	}
	return fams[len(fams)-1]
}

// demoFamilies are the scheduled families with a scripted solution: the
// built-in ones (their plans) and the MiniWoB++ tasks with a scripted
// solver (oracle.SolverFor); nil once the demonstrations are issued. The
// caller holds cu.mu.
func (cu *curriculum) demoFamilies() []catalog.FamilyInfo {
	if cu.demosIssued >= cu.c.Demos {
		return nil
	}
	var out []catalog.FamilyInfo
	for _, f := range cu.all {
		if _, solved := oracle.SolverFor(f.Name); !catalog.IsMiniWoB(f.Name) || solved {
			out = append(out, f)
		}
	}
	return out
}

// taskSeed maps the scheduler's n-th seed onto the task's side of the
// split: a MiniWoB++ task is split by seed range (catalog.MiniWoBSeed: train
// episodes never see a test problem), a built-in family by site, its seeds
// free.
func taskSeed(f catalog.FamilyInfo, split eventspb.Split, n int64) int64 {
	if !catalog.IsMiniWoB(f.Name) {
		return n
	}
	if split == eventspb.Split_SPLIT_TEST {
		return catalog.MiniWoBSeed(catalog.SplitTest, n)
	}
	return catalog.MiniWoBSeed(catalog.SplitTrain, n)
}
