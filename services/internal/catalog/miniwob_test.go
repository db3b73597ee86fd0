package catalog

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testMiniWoBDir is where infra/setup.sh unpacked the pages: the
// -miniwob-dir variable, else <run dir>/miniwob/html.
func testMiniWoBDir() string {
	if d := os.Getenv("ASYNCWEBRL_MINIWOB_DIR"); d != "" {
		return d
	}
	run := os.Getenv("ASYNCWEBRL_RUN_DIR")
	if run == "" {
		run = filepath.Join("..", "..", "..", ".run")
	}
	return filepath.Join(run, "miniwob", "html")
}

func TestMiniWoBTierRule(t *testing.T) {
	for _, c := range []struct {
		steps int
		want  Tier
	}{{1, Easy}, {2, Easy}, {3, Easy}, {4, Medium}, {6, Medium}, {7, Hard}, {12, Hard}} {
		if got := (MiniWoBTask{Steps: c.steps}).Tier(); got != c.want {
			t.Errorf("%d steps: tier %s, want %s", c.steps, got, c.want)
		}
	}
}

func TestMiniWoBTable(t *testing.T) {
	tasks := MiniWoBTasks()
	if len(tasks) != 130 {
		t.Errorf("%d tasks, want the 130 pages of miniwob %s", len(tasks), MiniWoBVersion)
	}
	if !slices.IsSortedFunc(tasks, func(a, b MiniWoBTask) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("the table is not sorted by name (MiniWoBTaskByName searches it)")
	}
	reasons := []string{needsPath, neverStable, neverRewards}
	var wge []string
	for i, tk := range tasks {
		if i > 0 && tasks[i-1].Name == tk.Name {
			t.Errorf("%s twice", tk.Name)
		}
		if tk.Steps < 1 || tk.MaxTime <= 0 || tk.Desc == "" {
			t.Errorf("%s: steps %d, max time %s, desc %q", tk.Name, tk.Steps, tk.MaxTime, tk.Desc)
		}
		if tk.Unsupported != "" && !slices.Contains(reasons, tk.Unsupported) {
			t.Errorf("%s: reason %q is not one of the known reasons", tk.Name, tk.Unsupported)
		}
		if got, ok := MiniWoBTaskByName(tk.Family()); !ok || got.Name != tk.Name {
			t.Errorf("MiniWoBTaskByName(%s) = %v, %v", tk.Family(), got.Name, ok)
		}
		if tk.WGE {
			wge = append(wge, tk.Name)
		}
	}
	// The project page's "Tasks used in the paper" (Liu et al. 2018).
	want := []string{"choose-list", "click-button", "click-button-sequence", "click-checkboxes", "click-color",
		"click-dialog", "click-dialog-2", "click-link", "click-option", "click-shades", "click-shape", "click-tab",
		"click-tab-2", "click-test", "click-test-2", "click-widget", "count-shape", "email-inbox", "enter-date",
		"enter-password", "enter-text", "enter-text-dynamic", "enter-time", "focus-text", "focus-text-2",
		"grid-coordinate", "guess-number", "identify-shape", "login-user", "navigate-tree", "search-engine",
		"social-media", "tic-tac-toe", "use-spinner"}
	if !slices.Equal(wge, want) {
		t.Errorf("WGE subset\n got %v\nwant %v", wge, want)
	}
	// Issue 16's acceptance tasks: supported, and easy by the rule.
	for _, n := range []string{"click-test", "click-button", "click-link", "click-dialog", "click-checkboxes",
		"click-option", "focus-text", "enter-text", "enter-password", "login-user", "choose-list"} {
		tk, ok := MiniWoBTaskByName(n)
		if !ok || !tk.Supported() || tk.Tier() != Easy {
			t.Errorf("%s: found %v, supported %v, tier %s", n, ok, tk.Supported(), tk.Tier())
		}
	}
	if _, ok := MiniWoBTaskByName("no-such-task"); ok {
		t.Error("an unknown task was found")
	}
}

// TestMiniWoBTableMatchesPages checks the table against the unpacked pages:
// the same task names, and each page's own time limit.
func TestMiniWoBTableMatchesPages(t *testing.T) {
	dir := testMiniWoBDir()
	pages, _ := filepath.Glob(filepath.Join(dir, "miniwob", "*.html"))
	if len(pages) == 0 {
		t.Skipf("no MiniWoB++ pages in %s: run `make setup` (infra/setup.sh miniwob)", dir)
	}
	maxTime := regexp.MustCompile(`core\.EPISODE_MAX_TIME\s*=\s*(\d+)`)
	var names []string
	for _, p := range pages {
		name := strings.TrimSuffix(filepath.Base(p), ".html")
		names = append(names, name)
		tk, ok := MiniWoBTaskByName(name)
		if !ok {
			t.Errorf("page %s is not in the table", name)
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want := MiniWoBDefaultMaxTime
		if m := maxTime.FindSubmatch(b); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			want = time.Duration(n) * time.Millisecond
		}
		if tk.MaxTime != want {
			t.Errorf("%s: max time %s in the table, %s in the page", name, tk.MaxTime, want)
		}
	}
	for _, tk := range MiniWoBTasks() {
		if !slices.Contains(names, tk.Name) {
			t.Errorf("task %s has no page in %s", tk.Name, dir)
		}
	}
}

func TestParseSuite(t *testing.T) {
	for in, want := range map[string]Suite{"": SuiteBuiltin, "builtin": SuiteBuiltin, "MiniWoB": SuiteMiniWoB, "all": SuiteAll} {
		if got, err := ParseSuite(in); err != nil || got != want {
			t.Errorf("ParseSuite(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseSuite("miniwob++"); err == nil {
		t.Error("an unknown suite parsed")
	}
	if n := len(SuiteFamilies(SuiteAll)); n != len(Families())+130 {
		t.Errorf("suite all has %d families", n)
	}
	if fams := SuiteFamilies(SuiteMiniWoB); fams[0].Tier != Easy || fams[len(fams)-1].Tier != Hard {
		t.Errorf("miniwob families not easy first: %s ... %s", fams[0].Tier, fams[len(fams)-1].Tier)
	}
}

func TestPrintMiniWoB(t *testing.T) {
	var buf bytes.Buffer
	if err := PrintSuite(&buf, "text", SuiteMiniWoB); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"miniwob/draw-circle", "no: " + needsPath, "miniwob/click-test ", "130 tasks of miniwob 1.1.0", "125 supported"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q", want)
		}
	}
	buf.Reset()
	if err := PrintSuite(&buf, "json", SuiteMiniWoB); err != nil {
		t.Fatal(err)
	}
	var fams []FamilyInfo
	if err := json.Unmarshal(buf.Bytes(), &fams); err != nil || len(fams) != 130 {
		t.Fatalf("json: %d families, %v", len(fams), err)
	}
	for _, f := range fams {
		if f.Name == "miniwob/draw-circle" && (f.Unsupported != needsPath || f.Suite != SuiteMiniWoB) {
			t.Errorf("draw-circle: %+v", f)
		}
		if f.Name == "miniwob/hover-shape" && f.Unsupported != neverRewards {
			t.Errorf("hover-shape: %+v (its page never rewards)", f)
		}
	}
}

// TestMiniWoBPublishedScores: the embedded table parses, names 104 tasks of
// the MiniWoB++ table with a human and a CC-Net score each, and a
// malformed cell is an error naming it.
func TestMiniWoBPublishedScores(t *testing.T) {
	p := MiniWoBPublishedScores()
	if len(p.Scores) != 104 || !strings.Contains(p.Source, "Synapse") {
		t.Fatalf("%d tasks from %q, want Synapse's 104", len(p.Scores), p.Source)
	}
	for task := range p.Scores {
		if _, ok := MiniWoBTaskByName(task); !ok && !PublishedNotServed[task] {
			t.Errorf("published task %q is not in the MiniWoB++ table", task)
		}
		for _, col := range []string{PublishedHuman, PublishedCCNet} {
			if _, ok := p.Score(MiniWoBPrefix+task, col); !ok {
				t.Errorf("%s has no %s score", task, col)
			}
		}
	}
	if v, ok := p.Score("miniwob/click-button", PublishedHuman); !ok || v <= 0 {
		t.Errorf("click-button's human score %v, %v", v, ok)
	}
	if _, err := parsePublished("# src\ntask\tA\nx\t1.5\n"); err == nil || !strings.Contains(err.Error(), "x's A") {
		t.Errorf("a score of 1.5 gave %v", err)
	}
}

// The development set names supported tasks of the table only, each with
// what it designed.
func TestMiniWoBDevelopmentSet(t *testing.T) {
	dev := MiniWoBDevelopmentSet()
	if len(dev) < 11 {
		t.Fatalf("development set of %d tasks: the 11 acceptance tasks at least", len(dev))
	}
	for _, n := range dev {
		tk, ok := MiniWoBTaskByName(n)
		why, _ := MiniWoBDevelopment(MiniWoBPrefix + n)
		if !ok || !tk.Supported() || why == "" {
			t.Errorf("%s: in the table %v, supported %v, why %q", n, ok, tk.Supported(), why)
		}
	}
	if _, ok := MiniWoBDevelopment("miniwob/use-slider-2"); ok {
		t.Error("use-slider-2 is in the development set")
	}
}
