package catalog

import (
	"fmt"
	"slices"
	"strings"
)

// The MiniWoB++ train/test split is by episode seed, not by site: a task has
// one page, and its problems differ only by the seed given to
// Math.seedrandom before core.startEpisodeReal. The MiniWoB literature
// trains on sampled episodes of a task and reports success on other episodes
// of the same task; here the two are disjoint seed ranges, so that no test
// problem is ever trained on and a held-out figure measures generalisation
// to new instances:
//
//	train: [MiniWoBTrainSeedFirst, MiniWoBTestSeedFirst)  1 .. 999,999,999
//	test:  [MiniWoBTestSeedFirst, MiniWoBSeedEnd)         1,000,000,000 .. 1,999,999,999
//
// Seeds outside both (0, negative, 2e9 and above) belong to neither: they are
// never scheduled and the learner treats them as held out. The bounds fit a
// JavaScript number exactly and keep the page's seedrandom(String(seed))
// input short.
const (
	MiniWoBTrainSeedFirst int64 = 1
	MiniWoBTestSeedFirst  int64 = 1_000_000_000
	MiniWoBSeedEnd        int64 = 2_000_000_000
)

// IsMiniWoB reports whether a family names a MiniWoB++ task.
func IsMiniWoB(family string) bool { return strings.HasPrefix(family, MiniWoBPrefix) }

// MiniWoBSeedSplit returns the split of a MiniWoB++ episode seed: train,
// test, or "" for a seed outside both ranges.
func MiniWoBSeedSplit(seed int64) Split {
	switch {
	case seed >= MiniWoBTrainSeedFirst && seed < MiniWoBTestSeedFirst:
		return SplitTrain
	case seed >= MiniWoBTestSeedFirst && seed < MiniWoBSeedEnd:
		return SplitTest
	}
	return ""
}

// MiniWoBSeed returns the n-th seed (n >= 0) of a split's range, wrapping
// within it, so that a counter of any size stays on its side of the split.
func MiniWoBSeed(split Split, n int64) int64 {
	first, end := MiniWoBTrainSeedFirst, MiniWoBTestSeedFirst
	if split == SplitTest {
		first, end = MiniWoBTestSeedFirst, MiniWoBSeedEnd
	}
	size := end - first
	return first + ((n%size)+size)%size
}

// TaskSplit returns the split of one episode: by seed for a MiniWoB++ task
// (a seed outside both ranges counts as test, so it is never trained on), by
// site for a built-in family.
func TaskSplit(family, site string, seed int64) Split {
	if IsMiniWoB(family) {
		if s := MiniWoBSeedSplit(seed); s != "" {
			return s
		}
		return SplitTest
	}
	return SiteSplit(family, site)
}

// TrainSites returns the sites a family is trained on: the built-in
// family's train sites, or a MiniWoB++ task's one site.
func TrainSites(f FamilyInfo) []string {
	var out []string
	for _, s := range f.Sites {
		if s.Split == SplitTrain || (f.Suite == SuiteMiniWoB && s.Split == SplitAll) {
			out = append(out, s.Name)
		}
	}
	return out
}

// HeldOutSite returns the site a family is evaluated on: the built-in
// family's test site, or a MiniWoB++ task's one site (held out by seed).
func HeldOutSite(f FamilyInfo) string {
	if f.Suite == SuiteMiniWoB {
		return MiniWoBSite
	}
	return TestSite(f.Name)
}

// Schedulable lists the families of a suite that can be trained and
// evaluated: every built-in family, and the MiniWoB++ tasks the action space
// can express (the others are listed by MiniWoBFamilies with their reason,
// and never scheduled nor counted in success figures). Easy first, built-in
// before MiniWoB++ within a tier.
func Schedulable(s Suite) []FamilyInfo {
	var out []FamilyInfo
	for _, f := range SuiteFamilies(s) {
		if f.Unsupported == "" {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b FamilyInfo) int { return int(a.Tier) - int(b.Tier) })
	return out
}

// LookupFamily finds a family of any suite by its exact name (a MiniWoB++
// task with its "miniwob/" prefix), supported or not.
func LookupFamily(name string) (FamilyInfo, bool) {
	if IsMiniWoB(name) {
		t, ok := MiniWoBTaskByName(name)
		if !ok {
			return FamilyInfo{}, false
		}
		for _, f := range MiniWoBFamilies() {
			if f.Name == t.Family() {
				return f, true
			}
		}
		return FamilyInfo{}, false
	}
	for _, f := range Families() {
		if f.Name == name {
			return f, true
		}
	}
	return FamilyInfo{}, false
}

// lookupFamily finds a family by name, the suite's own first: in the
// MiniWoB++ suite "click-button" is miniwob/click-button, in the built-in one
// the generated family of that name. A MiniWoB++ task may be named without
// its "miniwob/" prefix. ok is false for an unknown name; inSuite is false
// for a family of another suite.
func lookupFamily(s Suite, name string) (f FamilyInfo, inSuite, ok bool) {
	find := func(fams []FamilyInfo, n string) (FamilyInfo, bool) {
		for _, f := range fams {
			if f.Name == n {
				return f, true
			}
		}
		return FamilyInfo{}, false
	}
	mine := SuiteFamilies(s)
	if f, ok := find(mine, name); ok {
		return f, true, true
	}
	if f, ok := find(mine, MiniWoBPrefix+name); ok {
		return f, true, true
	}
	all := SuiteFamilies(SuiteAll)
	if f, ok := find(all, name); ok {
		return f, false, true
	}
	if f, ok := find(all, MiniWoBPrefix+name); ok {
		return f, false, true
	}
	return FamilyInfo{}, false, false
}

// SelectFamilies resolves names (built-in families, MiniWoB++ tasks with or
// without their prefix) to schedulable families of the suite. An unknown
// name, one outside the suite, or a task the action space cannot express is
// an error that says which and why.
func SelectFamilies(s Suite, names []string) ([]FamilyInfo, error) {
	var out []FamilyInfo
	for _, n := range names {
		f, inSuite, ok := lookupFamily(s, strings.TrimSpace(n))
		switch {
		case !ok:
			return nil, fmt.Errorf("unknown task %q (asyncwebrl webenv families --suite %s lists them)", n, s)
		case !inSuite:
			return nil, fmt.Errorf("task %s is not in suite %s", f.Name, s)
		case f.Unsupported != "":
			return nil, fmt.Errorf("task %s is not supported by the action space: %s", f.Name, f.Unsupported)
		}
		if !slices.ContainsFunc(out, func(o FamilyInfo) bool { return o.Name == f.Name }) {
			out = append(out, f)
		}
	}
	return out, nil
}
