package joiner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

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
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		// A member that stopped consuming (failed, fenced) cannot catch up:
		// no point waiting out the deadline.
		select {
		case <-s.done:
			cancel(errors.New("the joiner stopped consuming"))
		case <-ctx.Done():
		}
	}()
	t0 := time.Now()
	newClient := func(opts ...kgo.Opt) (*kgo.Client, error) { return s.factory.NewClient("joiner-drain", opts...) }
	lag, err := kafka.WaitCaughtUp(ctx, newClient, s.group, slices.Sorted(maps.Keys(s.kinds)))
	if err != nil {
		records, parts := lag.Behind()
		s.log.Warn("joiner not drained", "records_behind", records, "partitions_behind", parts,
			"took", time.Since(t0).Round(time.Millisecond), "err", err)
		return fmt.Errorf("unable to drain the joiner (group %s, %d records behind on %d partitions): %w", s.group, records, parts, err)
	}
	s.log.Info("joiner drained", "partitions", len(lag.Partitions), "took", time.Since(t0).Round(time.Millisecond))
	return nil
}
