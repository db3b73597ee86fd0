package cli

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
)

// health exits 0 on 200 (degraded included: the process rides an outage
// out) and fails on anything else, an unreachable server or a bad flag.
func TestHealth(t *testing.T) {
	status, body := http.StatusOK, "ok"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	url := srv.URL + "/healthz"
	for _, tc := range []struct {
		status int
		body   string
		ok     bool
	}{{200, "ok", true}, {200, "degraded: Kafka broker unreachable for 20s", true}, {503, "failed: recorder: ClickHouse refused", false}} {
		status, body = tc.status, tc.body
		var out, errb strings.Builder
		err := runHealth(t.Context(), []string{"--url", url}, &out, &errb)
		if (err == nil) != tc.ok {
			t.Errorf("%d %q: err %v, want ok=%v", tc.status, tc.body, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), tc.body) {
			t.Errorf("%d: error %q does not give the answer", tc.status, err)
		}
	}
	srv.Close()
	if err := runHealth(t.Context(), []string{"--url", url, "--timeout", "1s"}, &strings.Builder{}, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "unable to reach") {
		t.Errorf("a server that is gone: %v", err)
	}
	var ue cmdkit.UsageError
	if err := runHealth(t.Context(), []string{"--timeout", "soon"}, &strings.Builder{}, &strings.Builder{}); !errors.As(err, &ue) {
		t.Errorf("a bad timeout: %v, want a usage error", err)
	}
}
