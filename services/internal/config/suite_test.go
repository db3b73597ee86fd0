package config

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

func TestSuiteFlags(t *testing.T) {
	none := func(string) string { return "" }
	d, err := Parse([]string{"-run-dir=/r"}, none, io.Discard)
	if err != nil || d.Suite != "builtin" || d.Webenv.MiniWoBDir != filepath.Join("/r", "miniwob", "html") {
		t.Fatalf("defaults: suite %q dir %q, %v", d.Suite, d.Webenv.MiniWoBDir, err)
	}
	env := func(k string) string { return map[string]string{"ASYNCWEBRL_SUITE": "MiniWoB"}[k] }
	c, err := Parse([]string{"-miniwob-dir=/pages"}, env, io.Discard)
	if err != nil || c.Suite != "miniwob" || c.Webenv.MiniWoBDir != "/pages" {
		t.Fatalf("env: suite %q dir %q, %v", c.Suite, c.Webenv.MiniWoBDir, err)
	}
	if c, err = Parse([]string{"-suite=all"}, env, io.Discard); err != nil || c.Suite != "all" {
		t.Fatalf("flag over env: %q, %v", c.Suite, err)
	}
	if _, err := Parse([]string{"-suite=miniwob++"}, none, io.Discard); err == nil || !strings.Contains(err.Error(), "invalid -suite") {
		t.Errorf("an unknown suite: %v", err)
	}
}

// A fresh policy's architecture takes the run's action set and ablations.
func TestFreshArchitecture(t *testing.T) {
	c, err := Parse([]string{"-suite", "miniwob", "-ablate", "task-specific"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a := c.FreshArchitecture()
	if len(a.Ablations) != 1 || a.Ablations[0] != policy.AblateTaskSpecific || len(a.ActionTypes) != len(policy.ArchitectureFor(action.SetBidCoord).ActionTypes) {
		t.Fatalf("fresh architecture: ablations %v, %d action types", a.Ablations, len(a.ActionTypes))
	}
	if d, err := Parse(nil, env(nil), io.Discard); err != nil || len(d.FreshArchitecture().Ablations) != 0 {
		t.Fatalf("default: %v", err)
	}
}
