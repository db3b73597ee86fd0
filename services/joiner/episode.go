package joiner

import (
	"bytes"
	"errors"
	"math"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// event is one accepted input event of an open episode.
type event struct {
	kind    Kind
	id      string
	episode string
	step    uint32
	time    int64
	src     Source

	// raw is the record value; raw and the decoded message are released
	// once the event is joined and no transition needs it any more.
	raw []byte
	obs *eventspb.Observation
	act *eventspb.Action
	rew *eventspb.Reward

	// joined: part of at least one transition. stale: dead-lettered as
	// STALE on arrival. Either settles the event's fate.
	joined bool
	stale  bool

	// Facts that outlive the payload.
	candidate bool // obs: stable or terminal
	version   uint64
	policy    string
	ref       string // action: obs_event_id
	reward    float64
	// rawReward and decayed: the reward's raw_reward and decayed_reward.
	rawReward, decayed float64
	done               bool
	success            bool
	truncated          bool
	aborted            bool
	origin             eventspb.Source

	// enc caches the event's changelog encoding; nil when it changed.
	enc []byte
	// needPayload: restored from the changelog, its record's bytes not
	// read back yet (Machine.FillPayload).
	needPayload bool
}

func (e *event) settled() bool { return e.joined || e.stale }

// refersToSource: the changelog names the event's record, because its fate
// is open (a dead letter points at it) or a transition still needs its bytes.
func (e *event) refersToSource() bool { return !e.settled() || len(e.raw) > 0 || e.needPayload }

func (e *event) release() {
	e.raw, e.obs, e.act, e.rew, e.enc = nil, nil, nil, nil, nil
}

// decode turns a record into an event, or returns the *eventspb.DecodeError
// that dead-letters it.
func decode(rec Record, set Settings) (*event, error) {
	var env *eventspb.Envelope
	ev := &event{kind: rec.Kind, src: rec.Source, raw: rec.Value}
	switch rec.Kind {
	case KindObs:
		o, err := eventspb.DecodeObservation(rec.Value)
		if err != nil {
			return nil, err
		}
		ev.obs, env = o, o.GetEnvelope()
		ev.candidate = (o.GetStable() && o.GetStabilityScore() >= set.MinStability) || o.GetTerminal()
	case KindAction:
		a, err := eventspb.DecodeAction(rec.Value)
		if err != nil {
			return nil, err
		}
		ev.act, env = a, a.GetEnvelope()
		ev.version, ev.policy, ev.ref = a.GetPolicyVersion(), a.GetPolicyName(), a.GetObsEventId()
	case KindReward:
		r, err := eventspb.DecodeReward(rec.Value)
		if err != nil {
			return nil, err
		}
		ev.rew, env = r, r.GetEnvelope()
		ev.reward, ev.done, ev.success, ev.truncated, ev.aborted = r.GetReward(), r.GetDone(), r.GetSuccess(), r.GetTruncated(), r.GetAborted()
		ev.rawReward, ev.decayed = r.GetRawReward(), r.GetDecayedReward()
		if set.RawReward {
			ev.reward = r.GetRawReward()
		}
	default:
		return nil, &eventspb.DecodeError{Type: "record", Reason: eventspb.ReasonCode_REASON_CODE_UNKNOWN_TYPE, Err: errors.New("not an input topic of the joiner")}
	}
	ev.id, ev.episode, ev.step, ev.origin = env.GetEventId(), env.GetEpisodeId(), env.GetStep(), env.GetSource()
	ev.time = env.GetProducedAtUnixNano()
	if ev.time == 0 {
		// A producer that did not stamp the time: the broker's timestamp
		// is as deterministic (it is part of the log).
		ev.time = rec.Source.Timestamp
	}
	return ev, nil
}

// stepState holds a step's events of each kind in log order (the order the
// machine accepted them, which is their topic-partition's order).
type stepState struct {
	obs  []*event // candidates (stable or terminal frames) only
	acts []*event
	rews []*event
}

func (s *stepState) firstAction() *event {
	if s == nil || len(s.acts) == 0 {
		return nil
	}
	return s.acts[0]
}

func (s *stepState) firstReward() *event {
	if s == nil || len(s.rews) == 0 {
		return nil
	}
	return s.rews[0]
}

// episode is the join state of one open episode.
type episode struct {
	id     string
	events []*event // in acceptance order
	ids    map[string]struct{}
	steps  map[uint32]*stepState

	emitted map[uint32]bool
	summary bool
	task    *eventspb.TaskRef
	// last is the largest event time of the episode's records.
	last int64
	// queued is the time of the episode's entry in the close heap, or
	// notQueued.
	queued int64
	// doneAt and abortAt are the first steps whose (first) reward is done,
	// or aborted; -1 while unknown.
	doneAt, abortAt int64
}

// notQueued: an episode without an entry in the close heap.
const notQueued = math.MinInt64

func newEpisode(id string) *episode {
	return &episode{
		id:      id,
		ids:     map[string]struct{}{},
		steps:   map[uint32]*stepState{},
		emitted: map[uint32]bool{},
		last:    math.MinInt64,
		queued:  notQueued,
		doneAt:  -1,
		abortAt: -1,
	}
}

func (ep *episode) add(ev *event) {
	// A record's value points into its fetch buffer; a copy keeps an open
	// episode from pinning whole buffers.
	ev.raw = bytes.Clone(ev.raw)
	ep.events = append(ep.events, ev)
	ep.ids[ev.id] = struct{}{}
	st := ep.steps[ev.step]
	if st == nil {
		st = &stepState{}
		ep.steps[ev.step] = st
	}
	switch ev.kind {
	case KindObs:
		st.obs = append(st.obs, ev)
	case KindAction:
		st.acts = append(st.acts, ev)
	case KindReward:
		st.rews = append(st.rews, ev)
	}
}

// aborted reports whether step t is at or after the aborted step.
func (ep *episode) aborted(t uint32) bool { return ep.abortAt >= 0 && int64(t) >= ep.abortAt }
