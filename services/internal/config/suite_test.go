package config

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
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
