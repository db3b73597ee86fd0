package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	// glibc malloc given back to the OS: doc.go there.
	_ "github.com/asyncwebrl/asyncwebrl/services/internal/cmalloc"
)

// EnvLibraryPath names the environment variable with the path of
// libonnxruntime.so (the Makefile exports it).
const EnvLibraryPath = "ASYNCWEBRL_ONNXRUNTIME_LIB"

// relLibraryPath is where infra/setup.sh installs the library, relative to
// the repository root.
const relLibraryPath = ".run/lib/libonnxruntime.so.1"

// ResolveLibraryPath returns explicit when set, else $ASYNCWEBRL_ONNXRUNTIME_LIB,
// else .run/lib/libonnxruntime.so.1 in the working directory or the nearest
// parent holding it, stopping at the repository root (go.mod), so tests
// running in package directories find it.
func ResolveLibraryPath(explicit string) (string, error) {
	check := func(p, from string) (string, error) {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("unable to find ONNX Runtime at %s (from %s): %w; run infra/setup.sh onnxruntime", p, from, err)
		}
		return p, nil
	}
	if explicit != "" {
		return check(explicit, "the library path option")
	}
	if p := os.Getenv(EnvLibraryPath); p != "" {
		return check(p, "$"+EnvLibraryPath)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("unable to find ONNX Runtime: %w", err)
	}
	for {
		p := filepath.Join(dir, relLibraryPath)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", fmt.Errorf("unable to find ONNX Runtime: $%s is unset and no %s above the working directory; run infra/setup.sh onnxruntime", EnvLibraryPath, relLibraryPath)
}

var runtimeState struct {
	sync.Mutex
	path string
}

// InitRuntime loads libonnxruntime once per process for every package
// that runs a model (the policy's sessions, the language model's): from
// explicit when set, else as ResolveLibraryPath finds it.
func InitRuntime(explicit string) error { return initRuntime(explicit) }

// initRuntime loads libonnxruntime once per process. ONNX Runtime has one
// environment per process, so a second call with another library is an error.
func initRuntime(explicit string) error {
	path, err := ResolveLibraryPath(explicit)
	if err != nil {
		return err
	}
	runtimeState.Lock()
	defer runtimeState.Unlock()
	if runtimeState.path != "" {
		if runtimeState.path != path {
			return fmt.Errorf("unable to load ONNX Runtime from %s: already loaded from %s", path, runtimeState.path)
		}
		return nil
	}
	if ort.IsInitialized() {
		return errors.New("unable to load ONNX Runtime: initialised outside package policy")
	}
	ort.SetSharedLibraryPath(path)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("unable to initialise ONNX Runtime from %s: %w", path, err)
	}
	runtimeState.path = path
	return nil
}
