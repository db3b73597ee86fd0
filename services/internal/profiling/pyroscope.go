package profiling

import (
	"fmt"
	"log/slog"
	"runtime"

	"github.com/grafana/pyroscope-go"

	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
)

// Start begins pushing profiles when cfg.Address is set and returns the
// function that stops it; with no address it does nothing. Tags name the
// targets, so one binary's profiles split by component in the UI.
func Start(cfg config.Pyroscope, instance string, targets []string, log *slog.Logger) (stop func() error, err error) {
	if cfg.Address == "" {
		return func() error { return nil }, nil
	}
	// Mutex and block profiles are off by default in Go; sample a fraction.
	runtime.SetMutexProfileFraction(5)
	runtime.SetBlockProfileRate(5)
	p, err := pyroscope.Start(pyroscope.Config{
		ApplicationName:   cfg.AppName,
		ServerAddress:     cfg.Address,
		BasicAuthUser:     cfg.User,
		BasicAuthPassword: cfg.Password.Reveal(),
		Tags:              map[string]string{"instance": instance, "targets": fmt.Sprint(targets)},
		Logger:            nil, // pyroscope-go's logger prints to stdout; errors surface as push failures
		ProfileTypes: []pyroscope.ProfileType{
			pyroscope.ProfileCPU, pyroscope.ProfileAllocObjects, pyroscope.ProfileAllocSpace,
			pyroscope.ProfileInuseObjects, pyroscope.ProfileInuseSpace, pyroscope.ProfileGoroutines,
			pyroscope.ProfileMutexCount, pyroscope.ProfileMutexDuration, pyroscope.ProfileBlockCount, pyroscope.ProfileBlockDuration,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("unable to start pyroscope profiling: %w", err)
	}
	log.Info("pushing profiles to pyroscope", "server", cfg.Address, "app", cfg.AppName)
	return p.Stop, nil
}
