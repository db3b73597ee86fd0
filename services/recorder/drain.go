package recorder

import (
	"context"
	"fmt"
	"maps"
	"slices"

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
	return kafka.Drain(ctx, "recorder", kafka.ClientFunc(r.newClient), r.o.group, slices.Sorted(maps.Keys(r.kinds)), r.done, r.o.log)
}
