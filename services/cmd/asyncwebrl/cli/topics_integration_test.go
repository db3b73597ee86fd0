package cli

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
)

// TestIntegrationTopicsCommand drives `asyncwebrl topics` as an operator
// would, against the real broker: apply twice (the second changes nothing),
// check (no drift), a change behind the catalog's back, check again (drift,
// exit 1).
func TestIntegrationTopicsCommand(t *testing.T) {
	testenv.Parallel(t)
	seeds := testenv.Brokers(t)
	bin := binary(t)
	prefix := testenv.Unique(t, "cli") + "."
	flags := []string{"-brokers=" + strings.Join(seeds, ","), "-topic-prefix=" + prefix}
	run := func(args ...string) (string, int) {
		cmd := exec.Command(bin, append(args, flags...)...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ts, _ := adm.ListTopics(ctx)
		var mine []string
		for _, n := range ts.Names() {
			if strings.HasPrefix(n, prefix) {
				mine = append(mine, n)
			}
		}
		_, _ = adm.DeleteTopics(ctx, mine...)
	})

	out, code := run("topics", "apply")
	if code != 0 || !strings.Contains(out, "11 change(s)") {
		t.Fatalf("first apply: exit %d\n%s", code, out)
	}
	out, code = run("topics", "apply")
	if code != 0 || !strings.Contains(out, "0 change(s)") {
		t.Fatalf("second apply: exit %d\n%s", code, out)
	}
	out, code = run("topics", "check")
	if code != 0 || !strings.Contains(out, "no drift") {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "cleanup.policy", Value: kadm.StringPtr("delete")}}, prefix+"weights"); err != nil {
		t.Fatal(err)
	}
	// The change reaches the broker's view a moment after the alter
	// returns: run check until it reports drift (bounded by ctx).
	for out, code = run("topics", "check"); code == 0 && ctx.Err() == nil; out, code = run("topics", "check") {
		time.Sleep(100 * time.Millisecond)
	}
	if code != 1 || !strings.Contains(out, "drift: "+prefix+"weights: cleanup.policy is delete, want compact") {
		t.Fatalf("check after drift: exit %d\n%s", code, out)
	}
}
