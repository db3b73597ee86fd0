package replaycmd

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/evalrun"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// TestEvalGroups checks what replay eval evaluates for --suite, --tasks,
// --tiers and -max-tier: tasks by tier, never one the action space cannot
// express.
func TestEvalGroups(t *testing.T) {
	t.Setenv("ASYNCWEBRL_SUITE", "")
	for _, tc := range []struct {
		name         string
		args         []string // binary flags (config.Parse)
		tasks, tiers string
		want         string // tier:count tier:count, or the error
	}{
		{"builtin default", nil, "", "", "easy:builtin medium:builtin hard:builtin"},
		{"builtin max tier", []string{"-max-tier=easy"}, "", "", "easy:builtin"},
		{"builtin up to medium", []string{"-max-tier=medium"}, "", "", "easy:builtin medium:builtin"},
		{"miniwob", []string{"--suite", "miniwob"}, "", "", "easy:miniwob medium:miniwob hard:miniwob"},
		{"miniwob easy run", []string{"-suite=miniwob", "-max-tier=easy"}, "", "", "easy:miniwob"},
		{"tiers named beat max tier", []string{"-suite=miniwob", "-max-tier=easy"}, "", "medium", "medium:miniwob"},
		{"tasks", []string{"--suite", "miniwob"}, "click-test,miniwob/enter-text,login-user,email-inbox-reply", "", "easy:3 medium:1"},
		{"tasks of all", []string{"-suite=all"}, "click-button,miniwob/click-button", "hard", "easy:2"},
		{"unsupported task", []string{"--suite", "miniwob"}, "click-test,draw-circle", "", "invalid --tasks: task miniwob/draw-circle is not supported by the action space: needs a curved mouse path"},
		{"task of another suite", nil, "click-test", "", "task miniwob/click-test is not in suite builtin"},
		{"unknown task", nil, "no-such-task", "", "invalid --tasks: unknown task"},
		{"miniwob task in builtin", nil, "miniwob/click-test", "", "not in suite builtin"},
		{"unknown tier", nil, "", "easy,impossible", "invalid --tiers"},
		{"the run's families", []string{"-suite=miniwob", "-families=miniwob/click-test,miniwob/email-inbox-reply"}, "", "", "easy:1 medium:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := cmdkit.Parse(tc.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			groups, err := evalGroups(cfg, tc.tasks, tc.tiers)
			if err != nil {
				var ue cmdkit.UsageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want a usage error with %q", err, tc.want)
				}
				return
			}
			var got []string
			for _, g := range groups {
				kind := "builtin"
				n := 0
				for _, f := range g.fams {
					if f.Unsupported != "" {
						t.Errorf("%s evaluated, beyond the action space (%s)", f.Name, f.Unsupported)
					}
					if f.Tier != g.tier {
						t.Errorf("%s (%s) in the %s group", f.Name, f.Tier, g.tier)
					}
					if catalog.IsMiniWoB(f.Name) {
						kind = "miniwob"
						n++
					}
				}
				switch {
				case tc.tasks != "" || strings.Contains(strings.Join(tc.args, " "), "-families="):
					kind = strconv.Itoa(len(g.fams)) // named tasks: how many
				case kind == "miniwob" && n != len(g.fams):
					kind = "mixed"
				}
				got = append(got, g.tier.String()+":"+kind)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("groups %v, want %s", got, tc.want)
			}
		})
	}
}

// Bad flags of replay eval, --suite and --tasks among them, are usage
// errors found before a broker is needed.
func TestEvalFlagsRejected(t *testing.T) {
	ctx := t.Context()
	for _, args := range [][]string{
		{"--suite", "miniwob++"},
		{"--suite", "miniwob", "--tasks", "draw-circle"},
		{"--suite", "miniwob", "--tasks", "no-such-task"},
		{"--tasks", ","},
		{"--tiers", "easy,impossible"},
		{"--episodes", "0"},
		{"--seed-base", "-5"},
	} {
		err := runEval(ctx, args, io.Discard, io.Discard)
		var ue cmdkit.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("replay eval %q: %v, want a usage error", args, err)
		}
	}
}

// A MiniWoB++ table gives each task's score (mean raw reward), strict
// success (raw 1) and raw > 0 apart, and sets the published human and
// CC-Net scores beside them with their citation, "-" for a task the table
// does not report; the development set's and the other tasks' means
// follow.
func TestEvalTablePublishedColumns(t *testing.T) {
	res := evalrun.Result{
		Success:  map[string]int{"miniwob/find-greatest": 4, "miniwob/click-test-transfer": 3},
		Strict:   map[string]int{"miniwob/find-greatest": 1, "miniwob/click-test-transfer": 3},
		Episodes: map[string]int{"miniwob/find-greatest": 4, "miniwob/click-test-transfer": 4},
		TimedOut: map[string]int{},
		Cut:      map[string]int{"miniwob/find-greatest": 1},
		Raw:      map[string]float64{"miniwob/find-greatest": 1.3, "miniwob/click-test-transfer": 3},
		Decayed:  map[string]float64{"miniwob/find-greatest": 0.8},
	}
	var b strings.Builder
	writeEvalTable(&b, catalog.Easy, []evalrun.Result{res}, func(int) string { return "v9" })
	md := b.String()
	pub := catalog.MiniWoBPublishedScores()
	human, _ := pub.Score("click-test-transfer", catalog.PublishedHuman)
	ccnet, _ := pub.Score("click-test-transfer", catalog.PublishedCCNet)
	for _, want := range []string{
		"| v9 score | v9 strict | v9 raw>0 | v9 decayed | v9 timeouts+cut | Human (published) | CCNet (published) |",
		"| miniwob/find-greatest | 0.33 | 1/4 | 4/4 | 0.20 | 0+1 | - | - |",
		fmt.Sprintf("| miniwob/click-test-transfer | 0.75 | 3/4 | 3/4 | 0.00 | 0+0 | %.2f | %.2f |", human, ccnet),
		"| **all** | **0.54** | **50%** | **88%** |",
		// Neither task designed a feature: both are "other".
		fmt.Sprintf("v9: development set (no task); other tasks 0.54 over 2 (%d above the human score).", map[bool]int{true: 1}[0.75 > human]),
		"Synapse",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
}
