package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

func TestWebenvFamiliesSuite(t *testing.T) {
	for _, c := range []struct {
		args       []string
		env        string
		code       int
		want, lack string
	}{
		{[]string{"webenv", "families"}, "", exitOK, "click-button ", "miniwob/"},
		{[]string{"webenv", "families", "--suite", "miniwob"}, "", exitOK, "no: needs a curved mouse path", "TRAIN SITES"},
		{[]string{"webenv", "families", "-suite=all", "-format", "json"}, "", exitOK, `"name": "miniwob/click-test"`, "TASK"},
		{[]string{"webenv", "families"}, "miniwob", exitOK, "130 tasks of miniwob", "TRAIN SITES"},
		{[]string{"webenv", "families", "--suite", "miniwob++"}, "", exitUsage, "invalid -suite", ""},
	} {
		t.Setenv("ASYNCWEBRL_SUITE", c.env)
		var out, errb bytes.Buffer
		code := Main(context.Background(), c.args, &out, &errb)
		got := out.String() + errb.String()
		if code != c.code || !strings.Contains(got, c.want) || (c.lack != "" && strings.Contains(got, c.lack)) {
			t.Errorf("%v (suite env %q): exit %d, output:\n%s", c.args, c.env, code, got[:min(len(got), 400)])
		}
	}
}

// TestMiniWoBTimeLimitOff: config's "off" is the env's BrowserGym limit
// (config does not import env, so it holds the number twice).
func TestMiniWoBTimeLimitOff(t *testing.T) {
	d, err := config.ParseMiniWoBTimeLimit("off")
	if err != nil || d != env.NoMiniWoBTimeLimit {
		t.Errorf("off = %v, %v; env.NoMiniWoBTimeLimit = %v", d, err, env.NoMiniWoBTimeLimit)
	}
}
