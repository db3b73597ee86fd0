package policy

import (
	"log/slog"
	"time"
)

// Option configures a Session or a Server.
type Option func(*options)

type options struct {
	// libraryPath: libonnxruntime's path (default: $ASYNCWEBRL_ONNXRUNTIME_LIB,
	// else .run/lib/libonnxruntime.so.1 found walking up to the repository root).
	libraryPath    string
	intraOpThreads int
	maxBatch       int
	maxWait        time.Duration
	logger         *slog.Logger
}

func defaultOptions() options {
	return options{
		intraOpThreads: 1,
		maxBatch:       32,
		maxWait:        2 * time.Millisecond,
		logger:         slog.Default(),
	}
}

func buildOptions(opts []Option) options {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithIntraOpThreads sets ONNX Runtime's threads per run (default 1: the
// actor's browsers need the other cores, and batching gives the speed-up).
func WithIntraOpThreads(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.intraOpThreads = n
		}
	}
}

// WithMaxBatch caps the samples per inference run (default 32).
func WithMaxBatch(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxBatch = n
		}
	}
}

// WithMaxWait bounds how long the first request of a batch waits for others
// (default 2ms).
func WithMaxWait(d time.Duration) Option {
	return func(o *options) {
		if d >= 0 {
			o.maxWait = d
		}
	}
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}
