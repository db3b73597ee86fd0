package joiner

import (
	"context"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

var _ app.Drainer = (*Service)(nil)

// Drain implements app.Drainer: it waits until the joiner group's committed
// offsets reach the end offsets its inputs have when Drain is called (the
// actors have stopped producing by then), so every input event of the run is
// joined, dead-lettered or held in the changelog, and its output committed,
// before the recorder drains that output. Episodes still open stay pending in
// the changelog, as at any stop. When ctx ends first, or the member stops
// consuming, it logs how far behind the group was left and returns an error;
// Stop works as usual afterwards. It is called after Start (the runner calls
// it on started services only).
func (s *Service) Drain(ctx context.Context) error {
	newClient := func(opts ...kgo.Opt) (*kgo.Client, error) { return s.factory.NewClient("joiner-drain", opts...) }
	return kafka.Drain(ctx, "joiner", newClient, s.group, slices.Sorted(maps.Keys(s.kinds)), s.done, s.log)
}
