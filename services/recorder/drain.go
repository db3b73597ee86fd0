package recorder

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

var _ app.Drainer = (*Recorder)(nil)

// Drain implements app.Drainer: it waits until the recorder group's
// committed offsets reach the end offsets of every recorded topic as they
// are when Drain is called (the producers have stopped and the joiner has
// drained by then). The recorder commits only after the insert, so caught up
// means every committed event of the run is in ClickHouse. When ctx ends
// first, or the recorder is not consuming (ClickHouse never answered), it
// logs how far behind the group was left and returns an error; Stop works as
// usual afterwards.
func (r *Recorder) Drain(ctx context.Context) error {
	if r.cl == nil {
		return nil
	}
	if !r.consuming.Load() {
		return fmt.Errorf("unable to drain the recorder (group %s): not consuming, ClickHouse never answered", r.o.group)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-r.done:
			cancel(errors.New("the recorder stopped consuming"))
		case <-ctx.Done():
		}
	}()
	t0 := time.Now()
	lag, err := kafka.WaitCaughtUp(ctx, kafka.ClientFunc(r.newClient), r.o.group, slices.Sorted(maps.Keys(r.kinds)))
	if err != nil {
		records, parts := lag.Behind()
		r.o.log.Warn("recorder not drained", "group", r.o.group, "records_behind", records, "partitions_behind", parts,
			"pending", r.pending.Load(), "took", time.Since(t0).Round(time.Millisecond), "err", err)
		return fmt.Errorf("unable to drain the recorder (group %s, %d records behind on %d partitions): %w", r.o.group, records, parts, err)
	}
	r.o.log.Info("recorder drained", "group", r.o.group, "partitions", len(lag.Partitions), "took", time.Since(t0).Round(time.Millisecond))
	return nil
}
