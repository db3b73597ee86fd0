package cli

import (
	"errors"
	"strings"
	"testing"
)

func TestBenchFlags(t *testing.T) {
	events, ratio, frame, rest, err := benchFlags([]string{"--events", "5000", "-brokers=b:1", "--min-ratio=0.5", "-log-level", "warn", "--frame-bytes", "4096"})
	if err != nil || events != 5000 || ratio != 0.5 || frame != 4096 || strings.Join(rest, " ") != "-brokers=b:1 -log-level warn" {
		t.Fatalf("got %d %v %d %q %v", events, ratio, frame, rest, err)
	}
	if events, ratio, frame, _, err := benchFlags(nil); err != nil || events != 200000 || ratio != 0 || frame != 256 {
		t.Fatalf("defaults: %d %v %d %v", events, ratio, frame, err)
	}
	for _, bad := range [][]string{{"--events", "0"}, {"--events"}, {"--min-ratio", "-1"}, {"-events=x"}, {"--frame-bytes=-1"}} {
		if _, _, _, _, err := benchFlags(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestJoinerOptionsFromEnv(t *testing.T) {
	env := map[string]string{"ASYNCWEBRL_JOINER_LATE_WINDOW": "45s", "ASYNCWEBRL_JOINER_MAX_STALENESS": "4"}
	opts, err := joinerOptions(func(k string) string { return env[k] })
	if err != nil || len(opts) != 1 {
		t.Fatalf("%d options, %v", len(opts), err)
	}
	for k, v := range map[string]string{"ASYNCWEBRL_JOINER_LATE_WINDOW": "-3s", "ASYNCWEBRL_JOINER_MAX_STALENESS": "many", "ASYNCWEBRL_JOINER_SESSION_TIMEOUT": "soon"} {
		if _, err := joinerOptions(func(key string) string {
			if key == k {
				return v
			}
			return ""
		}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}

// Bad flags of bench rollout and replay eval are usage errors, found before
// anything starts (no browser, broker or webenv is needed to reject them).
func TestRolloutAndEvalFlagsRejected(t *testing.T) {
	ctx := t.Context()
	for _, args := range [][]string{
		{"--modes", "async,bogus"},
		{"--modes", "async", "--min-ratio", "3"},
		{"--executors", "0"},
	} {
		var out, errb strings.Builder
		err := runBenchRollout(ctx, args, &out, &errb)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("bench rollout %q: %v, want a usage error", args, err)
		}
	}
	for _, args := range [][]string{
		{"--tiers", "easy,impossible"},
		{"--episodes", "0"},
		{"--seed-base", "-5"},
	} {
		var out, errb strings.Builder
		err := runReplayEval(ctx, args, &out, &errb)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("replay eval %q: %v, want a usage error", args, err)
		}
	}
}
