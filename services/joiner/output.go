package joiner

import (
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// Drop reasons: a record that is neither joined nor dead-lettered is
// counted under one of these.
const (
	// DropDuplicate: an event id already seen in the open episode.
	DropDuplicate = "duplicate"
	// DropUnstable: a frame the stability detector did not call settled;
	// it stays on the obs topic (and in ClickHouse) as an event.
	DropUnstable = "unstable"
	// DropSuperseded: a stable frame of a step whose transitions used
	// another frame.
	DropSuperseded = "superseded"
	// DropAfterDone: an event of a step after the episode's terminal step
	// (the final frame of a non-truncated episode).
	DropAfterDone = "after_done"
	// DropAborted: an event of the aborted step or later; infrastructure
	// failures are never training data.
	DropAborted = "aborted"
	// DropConflict: a second, different action or reward for one step; the
	// first in log order is the one joined.
	DropConflict = "conflict"
)

// Drop is one record counted as dropped.
type Drop struct {
	Reason  string
	Source  Source
	EventID string
}

// Output is what the machine produced since it was last taken.
type Output struct {
	Transitions []*eventspb.Transition
	Episodes    []*eventspb.Episode
	DeadLetters []*eventspb.DeadLetter
	Drops       []Drop
	// Changelog holds the join state records to write, in key order.
	Changelog []ChangelogRecord
	// Stats counts what happened since the last take (a delta, so Pending
	// may be negative).
	Stats Stats

	// parts[i] are the input records Transitions[i] embeds.
	parts []transitionParts
}

// ChangelogRecord is one record of the changelog topic; a nil Value is a
// tombstone.
type ChangelogRecord struct {
	Key   string
	Value []byte
}

// Stats are the machine's counters. Every consumed record is counted once,
// when its fate is decided: Consumed + Restored = Joined + DeadLettered +
// Dropped + Pending.
type Stats struct {
	Consumed int64
	// Restored counts undecided events taken over from the changelog.
	Restored int64
	// Joined counts events that became part of at least one transition.
	Joined int64
	// DeadLettered counts by reason code.
	DeadLettered map[eventspb.ReasonCode]int64
	// Dropped counts by reason.
	Dropped map[string]int64
	// Pending are accepted events whose fate is not decided yet.
	Pending int64
	// Transitions, Episodes: outputs emitted.
	Transitions int64
	Episodes    int64
	// EpisodesWithoutTask counts finished episodes whose summary could not
	// be written because no observation named the task.
	EpisodesWithoutTask int64
	// EpisodesAbandoned counts episodes closed without a done reward; they
	// get no summary.
	EpisodesAbandoned int64
}

func newStats() Stats {
	return Stats{DeadLettered: map[eventspb.ReasonCode]int64{}, Dropped: map[string]int64{}}
}

// Balanced reports whether every consumed record is accounted for.
func (s Stats) Balanced() bool {
	n := s.Joined + s.Pending
	for _, v := range s.DeadLettered {
		n += v
	}
	for _, v := range s.Dropped {
		n += v
	}
	return n == s.Consumed+s.Restored
}

// Add adds o's counters to s.
func (s *Stats) Add(o Stats) {
	if s.DeadLettered == nil {
		*s = newStats()
	}
	s.Consumed += o.Consumed
	s.Restored += o.Restored
	s.Joined += o.Joined
	for k, v := range o.DeadLettered {
		s.DeadLettered[k] += v
	}
	for k, v := range o.Dropped {
		s.Dropped[k] += v
	}
	s.Pending += o.Pending
	s.Transitions += o.Transitions
	s.Episodes += o.Episodes
	s.EpisodesWithoutTask += o.EpisodesWithoutTask
	s.EpisodesAbandoned += o.EpisodesAbandoned
}
