package config

import (
	"io"
	"strings"
	"testing"
)

// -loop=sync is the classic on-policy loop: the actors run in sync mode;
// another actor mode with it is refused, as is an unknown loop.
func TestLoopFlag(t *testing.T) {
	none := func(string) string { return "" }
	d, err := Parse(nil, none, io.Discard)
	if err != nil || d.Loop != "async" || d.Actor.Mode != "async" {
		t.Fatalf("defaults: loop %q mode %q, %v", d.Loop, d.Actor.Mode, err)
	}
	env := func(k string) string { return map[string]string{"ASYNCWEBRL_LOOP": "Sync"}[k] }
	c, err := Parse(nil, env, io.Discard)
	if err != nil || c.Loop != "sync" || c.Actor.Mode != "sync" {
		t.Fatalf("env: loop %q mode %q, %v", c.Loop, c.Actor.Mode, err)
	}
	if _, err := Parse([]string{"-loop=sync", "-actor-mode=sync-step"}, none, io.Discard); err == nil || !strings.Contains(err.Error(), "-loop=sync") {
		t.Errorf("sync-step actors in the on-policy loop: %v", err)
	}
	if _, err := Parse([]string{"-loop=lockstep"}, none, io.Discard); err == nil || !strings.Contains(err.Error(), "invalid -loop") {
		t.Errorf("an unknown loop: %v", err)
	}
}
