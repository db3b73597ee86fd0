package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestPolicyCommandUsage: the policy command's mistakes are usage errors
// (exit 2) named before any broker is dialled; -help prints the usage.
func TestPolicyCommandUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"policy"}, exitUsage, "policy needs a command: features"},
		{[]string{"policy", "weights"}, exitUsage, `unknown policy command "weights"`},
		{[]string{"policy", "features"}, exitUsage, "needs --out FILE.npz"},
		{[]string{"policy", "features", "--out", "f.npz", "--count", "0"}, exitUsage, `invalid --count "0"`},
		{[]string{"policy", "features", "--out", "f.npz", "--step", "-1"}, exitUsage, `invalid --step "-1"`},
		{[]string{"policy", "features", "--help"}, exitOK, "one array per input of the ONNX"},
		{[]string{"help"}, exitOK, "asyncwebrl policy features --out F.npz"},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), c.args, &out, &errb)
		got := out.String() + errb.String()
		if code != c.code || !strings.Contains(got, c.want) {
			t.Errorf("%v: exit %d, want %d with %q; output:\n%s", c.args, code, c.code, c.want, got[:min(len(got), 400)])
		}
	}
}
