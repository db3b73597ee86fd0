package joiner

import (
	"slices"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// tryEmit emits the transition of step t when all its pieces are present.
// Every choice below is either content (event times, ids, flags) or "first
// in log order", so the outcome never depends on how the input topics
// interleave.
func (m *Machine) tryEmit(ep *episode, t uint32) {
	if ep.emitted[t] || ep.aborted(t) {
		return
	}
	st := ep.steps[t]
	a := st.firstAction()
	if a == nil || a.stale {
		return
	}
	r := st.firstReward()
	if r == nil || r.aborted || !m.within(r.time, a.time) {
		return
	}
	s := m.stateOf(st, a)
	if s == nil {
		return
	}
	var next *event
	if !r.done || r.truncated {
		next = m.nextStateOf(ep, t, a)
		// A truncated episode's last step carries s_t+1 for bootstrapping
		// when it arrives; once the obs watermark is W past the action no
		// frame that could still arrive would be eligible, so it goes
		// without.
		if next == nil && !(r.done && r.truncated && m.passed(KindObs, a.time+m.window)) {
			return
		}
	}
	m.emit(ep, t, s, a, r, next)
}

// stateOf returns s_t: the frame a_t names, or when it names none, the
// first stable frame of step t within W of a_t.
func (m *Machine) stateOf(st *stepState, a *event) *event {
	for _, o := range st.obs {
		switch {
		case a.ref == "" && m.within(o.time, a.time):
			return o
		case a.ref != "" && o.id == a.ref:
			if m.within(o.time, a.time) {
				return o
			}
			return nil
		}
	}
	return nil
}

// nextStateOf returns s_t+1: the first stable frame of step t+1 within W
// of a_t, in log order.
func (m *Machine) nextStateOf(ep *episode, t uint32, a *event) *event {
	st := ep.steps[t+1]
	if st == nil {
		return nil
	}
	for _, o := range st.obs {
		if m.within(o.time, a.time) {
			return o
		}
	}
	return nil
}

func (m *Machine) emit(ep *episode, t uint32, s, a, r, next *event) {
	obs, act := s.obs, a.act
	task := obs.GetTask()
	if task == nil {
		task = ep.task
	}
	produced := max(s.time, a.time, r.time)
	end := r.time
	// s_t+1 goes by reference: it is the obs of step t+1's own transition,
	// and no consumer reads it from this one (issue 18).
	var nextObs *eventspb.Observation
	var nextSrc Source
	nextID := ""
	if next != nil {
		nextObs, nextSrc, nextID = next.obs, next.src, next.id
		produced = max(produced, next.time)
		end = next.time
	}
	tr := &eventspb.Transition{
		Envelope: &eventspb.Envelope{
			EventId:            transitionID(m.fp, ep.id, t),
			SchemaVersion:      eventspb.SchemaVersion,
			Producer:           m.producer,
			ProducedAtUnixNano: produced,
			EpisodeId:          ep.id,
			Step:               t,
			Source:             act.GetEnvelope().GetSource(),
		},
		EpisodeId:     ep.id,
		Step:          t,
		Obs:           obs,
		Action:        act,
		Reward:        r.reward,
		Done:          r.done,
		LogProbOld:    act.GetLogProb(),
		PolicyVersion: act.GetPolicyVersion(),
		PolicyName:    act.GetPolicyName(),
		GroupId:       task.GetGroupId(),
		TaskId:        task.GetTaskId(),
		Family:        task.GetFamily(),
		Site:          task.GetSite(),
		Tier:          task.GetTier(),
		Success:       r.success,
		Truncated:     r.truncated,
		Timings: &eventspb.TransitionTimings{
			ObserveMs:          obs.GetTimings().GetObserveMs(),
			SettleMs:           nextObs.GetTimings().GetSettleMs(),
			InferenceLatencyUs: act.GetInferenceLatencyUs(),
			StepMs:             uint32(max(end-a.time, 0) / 1e6),
		},
		NextObsEventId:   nextID,
		NextObsTopic:     nextSrc.Topic,
		NextObsPartition: nextSrc.Partition,
		NextObsOffset:    nextSrc.Offset,
	}
	m.out.Transitions = append(m.out.Transitions, tr)
	m.out.parts = append(m.out.parts, transitionParts{obs: s.raw, action: a.raw})
	m.count(func(s *Stats) { s.Transitions++ })
	ep.emitted[t] = true
	m.dirty[ep.id] = true
	for _, e := range []*event{s, a, r, next} {
		if e != nil && !e.joined {
			e.joined, e.enc = true, nil
			m.count(func(s *Stats) { s.Joined++; s.Pending-- })
		}
	}
	// The action and reward are used by this step only. A frame serves two
	// steps (state of its own, next state of the previous one); it is
	// released once both are emitted.
	a.release()
	r.release()
	m.releaseFrames(ep, t)
	m.releaseFrames(ep, t+1)
}

func (m *Machine) releaseFrames(ep *episode, u uint32) {
	if !ep.emitted[u] || (u > 0 && !ep.emitted[u-1]) {
		return
	}
	if st := ep.steps[u]; st != nil {
		for _, o := range st.obs {
			if o.joined {
				o.release()
			}
		}
	}
}

// trySummary writes the episode summary as soon as every step up to the
// terminal one is a transition (the aborted step itself never is) and the
// task is known. Otherwise it waits for the episode to close, when what it
// is made of is final.
func (m *Machine) trySummary(ep *episode) {
	if ep.summary || ep.doneAt < 0 || ep.task == nil {
		return
	}
	last := ep.doneAt
	if ep.abortAt == ep.doneAt {
		last--
	}
	for t := int64(0); t <= last; t++ {
		if !ep.emitted[uint32(t)] {
			return
		}
	}
	m.summarize(ep)
}

// summarize writes the Episode of a finished episode (doneAt known).
func (m *Machine) summarize(ep *episode) {
	ep.summary = true
	m.dirty[ep.id] = true
	if ep.task.GetTaskId() == "" {
		m.count(func(s *Stats) { s.EpisodesWithoutTask++ })
		return
	}
	d := uint32(ep.doneAt)
	done := ep.steps[d].firstReward()
	var ret float64
	var versions []uint64
	policy := ""
	start := done.time
	for t := uint32(0); t <= d; t++ {
		st := ep.steps[t]
		if r := st.firstReward(); r != nil {
			ret += r.reward
		}
		a := st.firstAction()
		if a == nil || ep.aborted(t) {
			continue
		}
		if !slices.Contains(versions, a.version) {
			versions = append(versions, a.version)
		}
		if policy == "" {
			policy = a.policy
		}
		if t == 0 {
			start = a.time
		}
	}
	slices.Sort(versions)
	task := ep.task
	m.out.Episodes = append(m.out.Episodes, &eventspb.Episode{
		Envelope: &eventspb.Envelope{
			EventId:            episodeID(m.fp, ep.id),
			SchemaVersion:      eventspb.SchemaVersion,
			Producer:           m.producer,
			ProducedAtUnixNano: done.time,
			EpisodeId:          ep.id,
			Step:               d,
			Source:             done.origin,
		},
		TaskId:             task.GetTaskId(),
		EpisodeId:          ep.id,
		GroupId:            task.GetGroupId(),
		Family:             task.GetFamily(),
		Site:               task.GetSite(),
		Tier:               task.GetTier(),
		Split:              task.GetSplit(),
		TotalReturn:        ret,
		Length:             d + 1,
		Success:            done.success,
		RawReward:          done.rawReward,
		DecayedReward:      done.decayed,
		Aborted:            done.aborted,
		Truncated:          done.truncated,
		PolicyVersionsUsed: versions,
		DurationMs:         uint64(max(done.time-start, 0) / 1e6),
		PolicyName:         policy,
	})
	m.count(func(s *Stats) { s.Episodes++ })
}
