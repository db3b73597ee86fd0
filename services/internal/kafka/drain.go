package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Drain is the body of a consumer's app.Drainer: it waits until group's
// committed offsets on topics reach the ends they have when Drain is
// called (WaitCaughtUp), logs how long that took or how far behind the
// group was left, and gives up early when stopped closes (a consumer that
// stopped consuming cannot catch up, so there is no point waiting out the
// deadline). what names the consumer in logs and errors.
func Drain(ctx context.Context, what string, newClient ClientFunc, group string, topics []string, stopped <-chan struct{}, log *slog.Logger) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-stopped:
			cancel(fmt.Errorf("the %s stopped consuming", what))
		case <-ctx.Done():
		}
	}()
	t0 := time.Now()
	lag, err := WaitCaughtUp(ctx, newClient, group, topics)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			err = errors.Join(err, cause)
		}
		records, parts := lag.Behind()
		log.Warn(what+" not drained", "group", group, "records_behind", records, "partitions_behind", parts,
			"took", time.Since(t0).Round(time.Millisecond), "err", err)
		return fmt.Errorf("unable to drain the %s (group %s, %d records behind on %d partitions): %w", what, group, records, parts, err)
	}
	log.Info(what+" drained", "group", group, "partitions", len(lag.Partitions), "took", time.Since(t0).Round(time.Millisecond))
	return nil
}
