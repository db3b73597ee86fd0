package loadtest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Report is what Verify found.
type Report struct {
	// Transitions.
	Expected   int
	Found      int // distinct expected transitions present
	Lost       int // expected, absent
	Duplicated int // extra copies of a transition
	Unexpected int // transitions nobody expected
	Mismatched int // present but made of other events than expected
	// CutTerminal are terminal transitions of episodes a killed producer
	// cut (Expected.Cut): the learner would train on such an episode.
	CutTerminal int
	// Episode summaries.
	EpisodesExpected, EpisodesFound, EpisodesLost, EpisodesDuplicated, EpisodesMismatched int
	// Dead letters.
	MalformedExpected int
	MalformedInDLQ    int
	DeadLetters       int
	// DuplicatedDeadLetters are second copies of a malformed record's
	// dead letter.
	DuplicatedDeadLetters int
	// OtherDeadLetters are dead letters that are not malformed records.
	OtherDeadLetters int
	// Examples of what went wrong, a few of each.
	Problems []string
}

// OK reports whether the output is exactly the expected one.
func (r Report) OK() bool {
	return r.Lost == 0 && r.Duplicated == 0 && r.Unexpected == 0 && r.Mismatched == 0 && r.CutTerminal == 0 &&
		r.EpisodesLost == 0 && r.EpisodesDuplicated == 0 && r.EpisodesMismatched == 0 &&
		r.MalformedInDLQ == r.MalformedExpected && r.DuplicatedDeadLetters == 0 && r.OtherDeadLetters == 0
}

func (r Report) String() string {
	s := fmt.Sprintf("transitions: %d expected, %d found, %d lost, %d duplicated, %d unexpected, %d mismatched, %d terminal of cut episodes; "+
		"episodes: %d expected, %d found, %d lost, %d duplicated, %d mismatched; "+
		"dlq: %d records, %d/%d malformed, %d duplicated, %d other",
		r.Expected, r.Found, r.Lost, r.Duplicated, r.Unexpected, r.Mismatched, r.CutTerminal,
		r.EpisodesExpected, r.EpisodesFound, r.EpisodesLost, r.EpisodesDuplicated, r.EpisodesMismatched,
		r.DeadLetters, r.MalformedInDLQ, r.MalformedExpected, r.DuplicatedDeadLetters, r.OtherDeadLetters)
	if len(r.Problems) > 0 {
		s += "\n  " + strings.Join(r.Problems, "\n  ")
	}
	return s
}

func (r *Report) problem(format string, args ...any) {
	if len(r.Problems) < 20 {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// coord is where a record is.
type coord struct {
	topic     string
	partition int32
	offset    int64
}

// Verify reads cat's transitions, episodes and dlq topics to their end,
// read_committed, and compares them with exp; it reads the obs topic too,
// to check that each transition's next state reference names the record
// that holds it. Run it once the joiner has
// committed every input record (WaitCaughtUp).
func Verify(ctx context.Context, newClient joiner.ClientFunc, cat *topics.Catalog, exp *Expected) (Report, error) {
	r := Report{Expected: len(exp.Transitions), EpisodesExpected: len(exp.Episodes), MalformedExpected: len(exp.Malformed)}

	// Where each observation is, to check the transitions' references.
	obsAt := map[coord]string{}
	err := joiner.ReadCommitted(ctx, newClient, cat.Name(topics.Obs), nil, func(rec *kgo.Record) error {
		if o, err := eventspb.DecodeObservation(rec.Value); err == nil {
			obsAt[coord{rec.Topic, rec.Partition, rec.Offset}] = o.GetEnvelope().GetEventId()
		}
		return nil
	})
	if err != nil {
		return r, err
	}

	seen := map[StepKey]int{}
	err = joiner.ReadCommitted(ctx, newClient, cat.Name(topics.Transitions), nil, func(rec *kgo.Record) error {
		tr, err := eventspb.DecodeTransition(rec.Value)
		if err != nil {
			r.Unexpected++
			r.problem("undecodable transition at %s[%d]@%d: %v", rec.Topic, rec.Partition, rec.Offset, err)
			return nil
		}
		k := StepKey{tr.EpisodeId, tr.Step}
		if tr.Done && exp.Cut[k.Episode] {
			r.CutTerminal++
			r.problem("terminal transition %s/%d of an episode a killed producer cut", k.Episode, k.Step)
		}
		want, ok := exp.Transitions[k]
		if !ok {
			r.Unexpected++
			r.problem("unexpected transition %s/%d", k.Episode, k.Step)
			return nil
		}
		seen[k]++
		if seen[k] > 1 {
			r.Duplicated++
			r.problem("duplicate transition %s/%d (copy %d at %s[%d]@%d)", k.Episode, k.Step, seen[k], rec.Topic, rec.Partition, rec.Offset)
			return nil
		}
		got := StepIDs{Obs: tr.Obs.GetEnvelope().GetEventId(), Action: tr.Action.GetEnvelope().GetEventId(), Reward: tr.Reward,
			Next: eventspb.NextObsEventID(tr), Done: tr.Done}
		if got != want {
			r.Mismatched++
			r.problem("transition %s/%d is made of %+v, want %+v", k.Episode, k.Step, got, want)
		}
		// The next state goes by reference: the record it names holds it.
		at := coord{tr.NextObsTopic, tr.NextObsPartition, tr.NextObsOffset}
		if want.Next != "" && (tr.NextObs != nil || obsAt[at] != want.Next) {
			r.Mismatched++
			r.problem("transition %s/%d names its next state %s at %s[%d]@%d, which holds %q (embedded: %v)",
				k.Episode, k.Step, want.Next, at.topic, at.partition, at.offset, obsAt[at], tr.NextObs != nil)
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	r.Found = len(seen)
	for k := range exp.Transitions {
		if seen[k] == 0 {
			r.Lost++
			r.problem("lost transition %s/%d", k.Episode, k.Step)
		}
	}

	eps := map[string]int{}
	err = joiner.ReadCommitted(ctx, newClient, cat.Name(topics.Episodes), nil, func(rec *kgo.Record) error {
		e, err := eventspb.DecodeEpisode(rec.Value)
		if err != nil {
			r.EpisodesMismatched++
			r.problem("undecodable episode at %s[%d]@%d: %v", rec.Topic, rec.Partition, rec.Offset, err)
			return nil
		}
		want, ok := exp.Episodes[e.EpisodeId]
		eps[e.EpisodeId]++
		switch {
		case !ok:
			r.EpisodesMismatched++
			r.problem("unexpected episode %s", e.EpisodeId)
		case eps[e.EpisodeId] > 1:
			r.EpisodesDuplicated++
			r.problem("duplicate episode %s", e.EpisodeId)
		case e.TaskId != want.TaskID || e.Length != want.Length || math.Abs(e.TotalReturn-want.Return) > 1e-9 || e.Success != want.Success || e.Aborted != want.Aborted:
			r.EpisodesMismatched++
			r.problem("episode %s: task %s length %d return %g success %v, want %+v", e.EpisodeId, e.TaskId, e.Length, e.TotalReturn, e.Success, want)
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	for id := range exp.Episodes {
		if eps[id] > 0 {
			r.EpisodesFound++
		} else {
			r.EpisodesLost++
		}
	}

	malformed, delivered := map[coord][]byte{}, map[coord]bool{}
	for _, m := range exp.Malformed {
		malformed[coord{m.Topic, m.Partition, m.Offset}] = m.Payload
	}
	err = joiner.ReadCommitted(ctx, newClient, cat.Name(topics.DLQ), nil, func(rec *kgo.Record) error {
		r.DeadLetters++
		dl, err := eventspb.DecodeDeadLetter(rec.Value)
		if err != nil {
			r.OtherDeadLetters++
			r.problem("undecodable dead letter at %s[%d]@%d: %v", rec.Topic, rec.Partition, rec.Offset, err)
			return nil
		}
		c := coord{dl.SourceTopic, dl.SourcePartition, dl.SourceOffset}
		want, ok := malformed[c]
		switch {
		case delivered[c]:
			r.DuplicatedDeadLetters++
			r.problem("second dead letter of %s[%d]@%d", c.topic, c.partition, c.offset)
		case !ok:
			r.OtherDeadLetters++
			r.problem("dead letter of %s[%d]@%d is not a malformed record: %s %s", c.topic, c.partition, c.offset, dl.ReasonCode, dl.Reason)
		case !bytes.Equal(want, dl.Payload):
			r.OtherDeadLetters++
			r.problem("dead letter of %s[%d]@%d carries other bytes than were sent", c.topic, c.partition, c.offset)
		default:
			r.MalformedInDLQ++
			delete(malformed, c)
			delivered[c] = true
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	for c := range malformed {
		r.problem("malformed record %s[%d]@%d is not in the dlq", c.topic, c.partition, c.offset)
	}
	return r, nil
}
