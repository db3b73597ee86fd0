package joiner

import (
	"container/heap"
	"fmt"
	"slices"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// closeUpTo closes every episode whose last event is more than W older
// than wm, the smallest input watermark. An episode's events are never more
// than W apart in event time (an actor that is silent for longer than W
// starts over as far as the joiner is concerned), so any record of it still
// to come is late on its own topic: the episode's set of events is final
// and the fate of its leftovers can be decided.
func (m *Machine) closeUpTo(wm int64) {
	if wm == minWatermarkNone {
		return
	}
	limit := wm - m.window
	for len(m.closing) > 0 && m.closing[0].last < limit {
		e := heap.Pop(&m.closing).(closeEntry)
		ep := m.episodes[e.id]
		switch {
		case ep == nil || ep.queued != e.last:
			continue // an entry of an episode that closed and opened again
		case ep.last != e.last:
			// The episode moved on since it was queued: queue it at
			// its last event, which may still be before limit.
			m.closing.push(ep.id, ep.last)
			ep.queued = ep.last
			continue
		}
		m.close(ep)
	}
}

func (m *Machine) close(ep *episode) {
	for _, e := range ep.events {
		if e.settled() {
			continue
		}
		m.count(func(s *Stats) { s.Pending-- })
		if reason := m.dropReason(ep, e); reason != "" {
			m.drop(e.src, e.id, reason)
			continue
		}
		code, reason := m.deadReason(ep, e)
		m.deadLetter(e.src, e.kind, e.raw, e, code, reason)
	}
	switch {
	case !ep.summary && ep.doneAt >= 0:
		m.summarize(ep)
	case ep.doneAt < 0 && len(ep.events) > 0:
		m.count(func(s *Stats) { s.EpisodesAbandoned++ })
	}
	delete(m.episodes, ep.id)
	delete(m.truncWait, ep.id)
	m.dirty[ep.id] = true
}

// dropReason returns why a leftover event is counted as dropped, or "" when
// it is a dead letter.
func (m *Machine) dropReason(ep *episode, e *event) string {
	st := ep.steps[e.step]
	switch {
	case ep.aborted(e.step):
		return DropAborted
	case ep.doneAt >= 0 && int64(e.step) > ep.doneAt:
		return DropAfterDone
	case e.kind == KindAction && st.firstAction() != e, e.kind == KindReward && st.firstReward() != e:
		return DropConflict
	case e.kind == KindObs && (ep.emitted[e.step] || (e.step > 0 && ep.emitted[e.step-1])):
		return DropSuperseded
	}
	return ""
}

// deadReason says why the step of a leftover event never joined.
func (m *Machine) deadReason(ep *episode, e *event) (eventspb.ReasonCode, string) {
	t := e.step
	st := ep.steps[t]
	a := st.firstAction()
	switch {
	case a == nil:
		return eventspb.ReasonCode_REASON_CODE_MISSING_ACTION, fmt.Sprintf("no action for step %d arrived within the late window %s", t, m.set.Window)
	case a.stale:
		return eventspb.ReasonCode_REASON_CODE_STALE, fmt.Sprintf("the action of step %d was beyond the staleness bound", t)
	}
	return eventspb.ReasonCode_REASON_CODE_JOIN_TIMEOUT, m.explain(ep, t, a)
}

func (m *Machine) explain(ep *episode, t uint32, a *event) string {
	st := ep.steps[t]
	r := st.firstReward()
	switch {
	case r == nil:
		return fmt.Sprintf("no reward for step %d arrived within the late window %s", t, m.set.Window)
	case !m.within(r.time, a.time):
		return fmt.Sprintf("the reward of step %d is %s away from its action (late window %s)", t, time.Duration(abs(r.time-a.time)), m.set.Window)
	case m.stateOf(st, a) == nil && a.ref != "":
		return fmt.Sprintf("state %s named by the action of step %d never arrived as a stable frame within the late window %s", a.ref, t, m.set.Window)
	case m.stateOf(st, a) == nil:
		return fmt.Sprintf("no stable state for step %d arrived within the late window %s", t, m.set.Window)
	case (!r.done || r.truncated) && m.nextStateOf(ep, t, a) == nil:
		return fmt.Sprintf("no stable next state (step %d) arrived within the late window %s", t+1, m.set.Window)
	}
	return fmt.Sprintf("step %d did not join", t)
}

func abs(d int64) int64 {
	if d < 0 {
		return -d
	}
	return d
}

// closeEntry schedules a close check for an episode. Each open episode has
// one entry, at its last event time when it was queued (episode.queued); an
// entry popped before the episode's current last event time is queued
// again at that time. One entry per event, as before, made a heap as large
// as the input.
type closeEntry struct {
	last int64
	id   string
}

// closeHeap is a min-heap (container/heap) by (last, id), so that
// episodes close in the same order whatever the interleaving of the inputs.
type closeHeap []closeEntry

func (h closeHeap) Len() int { return len(h) }
func (h closeHeap) Less(i, j int) bool {
	if h[i].last != h[j].last {
		return h[i].last < h[j].last
	}
	return h[i].id < h[j].id
}
func (h closeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *closeHeap) Push(x any)   { *h = append(*h, x.(closeEntry)) }
func (h *closeHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func (h *closeHeap) push(id string, last int64) { heap.Push(h, closeEntry{last: last, id: id}) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
