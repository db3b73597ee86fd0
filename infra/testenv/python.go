package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Python returns the interpreter of the analytics/python venv that
// `infra/setup.sh python` installs ($ASYNCWEBRL_RUN_DIR/pyenv, else the
// repository's .run/pyenv), checked by importing what the scripts use. When
// it is missing the test fails under CI=true (CI must run the Python
// interop, and `make test` installs it) and is skipped otherwise, with the
// command that installs it either way.
func Python(t testing.TB) string {
	t.Helper()
	Integration(t)
	runDir := os.Getenv("ASYNCWEBRL_RUN_DIR")
	if runDir == "" {
		runDir = filepath.Join(RepoDir(t), ".run")
	}
	py := filepath.Join(runDir, "pyenv", "bin", "python")
	cmd := exec.Command(py, "-c", "import confluent_kafka, google.protobuf, numpy, onnxruntime, PIL, tokenizers")
	out, err := cmd.CombinedOutput()
	if err == nil {
		return py
	}
	why := err.Error()
	if o := strings.TrimSpace(string(out)); o != "" {
		why += ": " + o
	}
	msg := "the Python environment of analytics/python is not installed at " + py +
		" (" + why + "); install it with `infra/setup.sh python` (`make test` does)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
