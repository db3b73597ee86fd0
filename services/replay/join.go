package replay

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/asyncwebrl/asyncwebrl/services/joiner"
)

// Source yields the raw input records of a bounded history: the obs,
// actions and rewards of every partition, each topic-partition in offset
// order (how the three logs interleave does not matter: the join's
// decisions depend on each log's own order only).
type Source interface {
	Records(ctx context.Context, fn func(joiner.Record) error) error
}

// Emit receives one output transition: its input partition number, key
// (episode id) and encoded value.
type Emit func(partition int32, key, value []byte) error

// Result summarises a replay join.
type Result struct {
	Records     int64
	Transitions int64
	Episodes    int64
	// DeadLetters and Dropped count by reason: what the settings left out.
	DeadLetters map[string]int64
	Dropped     map[string]int64
	Partitions  int
}

// takeEvery bounds the output a machine holds before it is handed on.
const takeEvery = 5000

// Join runs the joiner's state machine with set over src and emits every
// transition. join_ms is 0 in replayed transitions, so the same history and
// settings always give the same bytes, and the same event ids (they derive
// from the settings' fingerprint and the episode and step).
func Join(ctx context.Context, src Source, set joiner.Settings, emit Emit) (Result, error) {
	res := Result{DeadLetters: map[string]int64{}, Dropped: map[string]int64{}}
	if err := set.Validate(); err != nil {
		return res, err
	}
	machines := map[int32]*joiner.Machine{}
	pending := map[int32]int{}
	take := func(p int32, m *joiner.Machine) error {
		out, err := m.Take()
		if err != nil {
			return fmt.Errorf("unable to take the join's output of partition %d: %w", p, err)
		}
		for i, tr := range out.Transitions {
			b, err := out.MarshalTransition(i, 0)
			if err != nil {
				return err
			}
			if err := emit(p, []byte(tr.GetEpisodeId()), b); err != nil {
				return err
			}
		}
		res.Transitions += int64(len(out.Transitions))
		res.Episodes += int64(len(out.Episodes))
		for _, d := range out.DeadLetters {
			res.DeadLetters[d.GetReasonCode().String()]++
		}
		for _, d := range out.Drops {
			res.Dropped[d.Reason]++
		}
		return nil
	}
	err := src.Records(ctx, func(r joiner.Record) error {
		p := r.Source.Partition
		m := machines[p]
		if m == nil {
			var err error
			if m, err = joiner.NewMachine(p, set); err != nil {
				return err
			}
			machines[p] = m
		}
		m.Apply(r)
		res.Records++
		if pending[p]++; pending[p] >= takeEvery {
			pending[p] = 0
			return take(p, m)
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	for _, p := range slices.Sorted(maps.Keys(machines)) {
		m := machines[p]
		m.Finish()
		if err := take(p, m); err != nil {
			return res, err
		}
	}
	res.Partitions = len(machines)
	return res, nil
}
