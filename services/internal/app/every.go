package app

import (
	"context"
	"time"
)

// Every calls fn every d until ctx ends (the first call one d after the
// start); a call in progress finishes first. It is the loop of the periodic
// jobs: the actors' telemetry, the curriculum's task queue, the recorder's
// lag snapshots.
func Every(ctx context.Context, d time.Duration, fn func(ctx context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(ctx)
		}
	}
}
