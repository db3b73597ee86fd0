package catalog

import (
	"strings"
	"testing"
)

func TestMiniWoBSeedSplit(t *testing.T) {
	for _, tc := range []struct {
		seed int64
		want Split
	}{
		{-1, ""}, {0, ""},
		{1, SplitTrain}, {1001, SplitTrain}, {999_999_999, SplitTrain},
		{1_000_000_000, SplitTest}, {1_000_700_000, SplitTest}, {1_999_999_999, SplitTest},
		{2_000_000_000, ""}, {1 << 40, ""},
	} {
		if got := MiniWoBSeedSplit(tc.seed); got != tc.want {
			t.Errorf("MiniWoBSeedSplit(%d) = %q, want %q", tc.seed, got, tc.want)
		}
	}
}

func TestMiniWoBSeedStaysOnItsSide(t *testing.T) {
	for _, tc := range []struct {
		split Split
		n     int64
		want  int64
	}{
		{SplitTrain, 0, 1},
		{SplitTrain, 1000, 1001},
		{SplitTrain, 999_999_998, 999_999_999},
		{SplitTrain, 999_999_999, 1}, // wraps, never into the test range
		{SplitTrain, -1, 999_999_999},
		{SplitTest, 0, 1_000_000_000},
		{SplitTest, 700_000, 1_000_700_000},
		{SplitTest, 1_000_000_000, 1_000_000_000},
	} {
		got := MiniWoBSeed(tc.split, tc.n)
		if got != tc.want {
			t.Errorf("MiniWoBSeed(%s, %d) = %d, want %d", tc.split, tc.n, got, tc.want)
		}
		if MiniWoBSeedSplit(got) != tc.split {
			t.Errorf("MiniWoBSeed(%s, %d) = %d is on the %q side", tc.split, tc.n, got, MiniWoBSeedSplit(got))
		}
	}
}

func TestTaskSplit(t *testing.T) {
	test := TestSite("click-button")
	train := "aurora"
	if train == test {
		train = "basalt"
	}
	for _, tc := range []struct {
		family, site string
		seed         int64
		want         Split
	}{
		{"click-button", test, 5, SplitTest},
		{"click-button", train, 5, SplitTrain},
		{"click-button", train, 1_500_000_000, SplitTrain}, // built-in: the site decides
		{"miniwob/click-test", MiniWoBSite, 5, SplitTrain},
		{"miniwob/click-test", MiniWoBSite, 1_500_000_000, SplitTest},
		{"miniwob/click-test", MiniWoBSite, 0, SplitTest}, // neither range: never trained on
		{"miniwob/click-test", test, 5, SplitTrain},       // MiniWoB++: the seed decides
	} {
		if got := TaskSplit(tc.family, tc.site, tc.seed); got != tc.want {
			t.Errorf("TaskSplit(%s, %s, %d) = %q, want %q", tc.family, tc.site, tc.seed, got, tc.want)
		}
	}
}

func TestSchedulable(t *testing.T) {
	count := func(fs []FamilyInfo, suite Suite) int {
		n := 0
		for _, f := range fs {
			if f.Suite == suite {
				n++
			}
		}
		return n
	}
	supported := 0
	for _, t := range MiniWoBTasks() {
		if t.Supported() {
			supported++
		}
	}
	for _, tc := range []struct {
		suite            Suite
		builtin, miniwob int
	}{
		{SuiteBuiltin, len(Families()), 0},
		{"", len(Families()), 0},
		{SuiteMiniWoB, 0, supported},
		{SuiteAll, len(Families()), supported},
	} {
		fs := Schedulable(tc.suite)
		if b, m := count(fs, SuiteBuiltin), count(fs, SuiteMiniWoB); b != tc.builtin || m != tc.miniwob {
			t.Errorf("Schedulable(%q): %d built-in, %d MiniWoB++; want %d, %d", tc.suite, b, m, tc.builtin, tc.miniwob)
		}
		for i, f := range fs {
			if f.Unsupported != "" {
				t.Errorf("Schedulable(%q) holds %s, which the action space cannot express (%s)", tc.suite, f.Name, f.Unsupported)
			}
			if i > 0 && fs[i-1].Tier > f.Tier {
				t.Errorf("Schedulable(%q) is not easy first: %s (%s) after %s (%s)", tc.suite, f.Name, f.Tier, fs[i-1].Name, fs[i-1].Tier)
			}
			if len(TrainSites(f)) == 0 {
				t.Errorf("%s has no train site", f.Name)
			}
			if hs := HeldOutSite(f); TaskSplit(f.Name, hs, MiniWoBSeed(SplitTest, 3)) != SplitTest {
				t.Errorf("%s: held-out site %s with a test seed is not test", f.Name, hs)
			}
			for _, s := range TrainSites(f) {
				if TaskSplit(f.Name, s, MiniWoBSeed(SplitTrain, 3)) != SplitTrain {
					t.Errorf("%s: train site %s with a train seed is not train", f.Name, s)
				}
			}
		}
	}
}

func TestSelectFamilies(t *testing.T) {
	for _, tc := range []struct {
		suite   Suite
		names   []string
		want    []string
		wantErr string
	}{
		{SuiteMiniWoB, []string{"click-button", "miniwob/enter-text", "miniwob/click-button"}, []string{"miniwob/click-button", "miniwob/enter-text"}, ""},
		{SuiteBuiltin, []string{"click-button"}, []string{"click-button"}, ""},
		{SuiteMiniWoB, []string{"click-test", "miniwob/enter-text", "click-test"}, []string{"miniwob/click-test", "miniwob/enter-text"}, ""},
		{SuiteAll, []string{"click-button", "miniwob/click-button"}, []string{"click-button", "miniwob/click-button"}, ""},
		{SuiteMiniWoB, []string{"draw-circle"}, nil, "not supported by the action space: needs a curved mouse path"},
		{SuiteMiniWoB, []string{"no-such-task"}, nil, `unknown task "no-such-task"`},
		{SuiteBuiltin, []string{"click-test"}, nil, "not in suite builtin"},
		{SuiteMiniWoB, []string{"account-update"}, nil, "not in suite miniwob"},
	} {
		got, err := SelectFamilies(tc.suite, tc.names)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("SelectFamilies(%s, %v) = %v, want an error with %q", tc.suite, tc.names, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("SelectFamilies(%s, %v): %v", tc.suite, tc.names, err)
			continue
		}
		var names []string
		for _, f := range got {
			names = append(names, f.Name)
		}
		if strings.Join(names, ",") != strings.Join(tc.want, ",") {
			t.Errorf("SelectFamilies(%s, %v) = %v, want %v", tc.suite, tc.names, names, tc.want)
		}
	}
}
