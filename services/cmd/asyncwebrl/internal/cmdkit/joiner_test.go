package cmdkit

import (
	"strings"
	"testing"
)

func TestJoinerOptionsFromEnv(t *testing.T) {
	env := map[string]string{"ASYNCWEBRL_JOINER_LATE_WINDOW": "45s", "ASYNCWEBRL_JOINER_MAX_STALENESS": "4"}
	opts, err := JoinerOptions(func(k string) string { return env[k] })
	if err != nil || len(opts) != 1 {
		t.Fatalf("%d options, %v", len(opts), err)
	}
	for k, v := range map[string]string{"ASYNCWEBRL_JOINER_LATE_WINDOW": "-3s", "ASYNCWEBRL_JOINER_MAX_STALENESS": "many", "ASYNCWEBRL_JOINER_SESSION_TIMEOUT": "soon"} {
		if _, err := JoinerOptions(func(key string) string {
			if key == k {
				return v
			}
			return ""
		}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}
