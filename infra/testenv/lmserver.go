package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// LMServer starts (or finds running) the local OpenAI-compatible model
// server with infra/lm-server.sh, the script `make lm-server` runs, and
// returns its base URL and model name. It is left running for the next
// test (loading the model is the slow part); infra/down.sh stops it. When
// it is not installed the test fails under CI=true (`make test` installs
// it: infra/setup.sh lm) and is skipped otherwise.
func LMServer(t testing.TB) (baseURL, model string) {
	t.Helper()
	Integration(t)
	script := filepath.Join(RepoDir(t), "infra", "lm-server.sh")
	out, err := exec.Command(script, "start").CombinedOutput()
	if err != nil {
		msg := "the language-model server did not start (" + strings.TrimSpace(string(out)) + "); install it with `infra/setup.sh lm` (`make test` does)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	u, err := exec.Command(script, "url").Output()
	if err != nil {
		t.Fatal(err)
	}
	m, err := exec.Command(script, "model").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(u)), strings.TrimSpace(string(m))
}

// LMModel is the GGUF file `infra/setup.sh lm` fetched (SmolLM2-135M-
// Instruct) under the run dir; missing, the test fails under CI=true and
// is skipped otherwise.
func LMModel(t testing.TB) string {
	t.Helper()
	Integration(t)
	run := os.Getenv("ASYNCWEBRL_RUN_DIR")
	if run == "" {
		run = filepath.Join(RepoDir(t), ".run")
	}
	p := filepath.Join(run, "lm", "SmolLM2-135M-Instruct.Q4_1.gguf")
	if _, err := os.Stat(p); err != nil {
		msg := "no language model at " + p + ": run `infra/setup.sh lm` (`make test` does)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}
