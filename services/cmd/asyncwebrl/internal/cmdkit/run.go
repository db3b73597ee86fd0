package cmdkit

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// ApplyTopics creates or updates the catalog's topics and logs each
// change.
func ApplyTopics(ctx context.Context, f *kafka.Factory, c *topics.Catalog, log *slog.Logger) error {
	cl, err := f.NewClient("topics")
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	changes, err := topics.Apply(ctx, cl, c)
	if err != nil {
		return err
	}
	for _, ch := range changes {
		log.Info("topic changed", "topic", ch.Topic, "action", ch.Action, "detail", ch.Detail)
	}
	return nil
}

// Shutdown stops everything in reverse order under the deadline. When the
// deadline passes it dumps goroutine stacks to stderr (what was stuck is
// what an operator needs to see) and reports failure.
func Shutdown(runner *app.Runner, timeout time.Duration, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runner.Stop(ctx) }()
	select {
	case err := <-done:
		if err == nil {
			log.Info("stopped cleanly")
		}
		return err
	case <-ctx.Done():
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
		return fmt.Errorf("unable to stop within %s: goroutine stacks dumped above", timeout)
	}
}
