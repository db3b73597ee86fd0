package joiner

import (
	"fmt"
	"math"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// Machine joins the records of one input partition number. It is not safe
// for concurrent use; the service gives each partition its own.
type Machine struct {
	partition int32
	set       Settings
	window    int64 // set.Window in nanoseconds
	fp        string
	producer  string

	// maxTime[k] is the largest event time accepted on input kind k; the
	// kind's watermark is maxTime[k] - window.
	maxTime [4]int64
	seen    [4]bool
	// maxVersion is the newest policy version per policy name seen on the
	// actions, the reference of the staleness bound.
	maxVersion map[string]uint64

	episodes map[string]*episode
	closing  closeHeap
	// truncWait holds episodes whose truncated last step waits for its
	// next state until the obs watermark passes.
	truncWait map[string]bool

	// missing holds the restored events whose bytes are still to be read
	// from their input record.
	missing map[srcKey]*event

	out       Output
	total     Stats
	dirty     map[string]bool
	metaDirty bool
}

// NewMachine returns an empty machine for input partition number partition.
func NewMachine(partition int32, set Settings) (*Machine, error) {
	if err := set.Validate(); err != nil {
		return nil, err
	}
	fp := set.Fingerprint()
	m := &Machine{
		partition:  partition,
		set:        set,
		window:     set.Window.Nanoseconds(),
		fp:         fp,
		producer:   "joiner@" + fp,
		maxVersion: map[string]uint64{},
		episodes:   map[string]*episode{},
		truncWait:  map[string]bool{},
		total:      newStats(),
		dirty:      map[string]bool{},
		missing:    map[srcKey]*event{},
	}
	m.out.Stats = newStats()
	return m, nil
}

// Partition returns the input partition number the machine joins.
func (m *Machine) Partition() int32 { return m.partition }

// Stats returns the counters since the machine was created (or restored:
// a restored machine counts its restored events as pending only).
func (m *Machine) Stats() Stats { return m.total }

// OpenEpisodes returns the number of episodes held.
func (m *Machine) OpenEpisodes() int { return len(m.episodes) }

// Take returns the outputs produced since the last Take, with the
// changelog records of every episode that changed, and resets them.
func (m *Machine) Take() (Output, error) {
	if len(m.missing) > 0 {
		return Output{}, fmt.Errorf("unable to join partition %d: %d restored events still lack their record (FillPayload)", m.partition, len(m.missing))
	}
	out := m.out
	recs, err := m.changelog()
	if err != nil {
		return Output{}, err
	}
	out.Changelog = recs
	m.out = Output{Stats: newStats()}
	return out, nil
}

// Apply consumes one input record. A restored machine must have every
// payload filled first (MissingPayloads).
func (m *Machine) Apply(rec Record) {
	m.count(func(s *Stats) { s.Consumed++ })
	ev, err := decode(rec, m.set)
	if err != nil {
		m.deadLetter(rec.Source, rec.Kind, rec.Value, nil, eventspb.ReasonCodeOf(err), err.Error())
		return
	}
	if m.seen[ev.kind] {
		if wm := m.maxTime[ev.kind] - m.window; ev.time < wm {
			m.deadLetter(ev.src, ev.kind, rec.Value, ev, eventspb.ReasonCode_REASON_CODE_JOIN_TIMEOUT,
				fmt.Sprintf("late: event time is %s behind the %s watermark (late window %s)",
					time.Duration(wm-ev.time), ev.kind, m.set.Window))
			return
		}
	}
	ep := m.episodes[ev.episode]
	if ep == nil {
		ep = newEpisode(ev.episode)
		m.episodes[ev.episode] = ep
	}
	if _, dup := ep.ids[ev.id]; dup {
		m.drop(ev.src, ev.id, DropDuplicate)
		return
	}
	oldMin, oldObs := m.minWatermark(), m.watermark(KindObs)
	if !m.seen[ev.kind] || ev.time > m.maxTime[ev.kind] {
		m.seen[ev.kind] = true
		m.maxTime[ev.kind] = ev.time
		m.metaDirty = true
	}
	m.dirty[ep.id] = true
	if ev.time > ep.last {
		ep.last = ev.time
		if ep.queued == notQueued {
			m.closing.push(ep.id, ep.last)
			ep.queued = ep.last
		}
	}
	if ev.kind == KindObs {
		if ep.task == nil && ev.obs.GetTask() != nil {
			ep.task = ev.obs.GetTask()
		}
		if !ev.candidate {
			// Counted and forgotten: an unstable frame never becomes a
			// state, and its duplicates are unstable too.
			m.drop(ev.src, ev.id, DropUnstable)
			m.afterWatermarks(oldMin, oldObs)
			return
		}
	}
	ep.add(ev)
	m.count(func(s *Stats) { s.Pending++ })

	switch ev.kind {
	case KindAction:
		m.judgeStaleness(ep, ev)
		m.tryEmit(ep, ev.step)
	case KindReward:
		if ep.steps[ev.step].firstReward() == ev {
			if ev.done || ev.aborted {
				if ep.doneAt < 0 || int64(ev.step) < ep.doneAt {
					ep.doneAt = int64(ev.step)
				}
				if ev.truncated {
					m.truncWait[ep.id] = true
				}
			}
			if ev.aborted && (ep.abortAt < 0 || int64(ev.step) < ep.abortAt) {
				ep.abortAt = int64(ev.step)
			}
		}
		m.tryEmit(ep, ev.step)
	case KindObs:
		m.tryEmit(ep, ev.step)
		if ev.step > 0 {
			m.tryEmit(ep, ev.step-1)
		}
	}
	m.trySummary(ep)
	m.afterWatermarks(oldMin, oldObs)
}

// judgeStaleness dead-letters an action whose policy version is more than
// K behind the newest version seen on this partition's actions (itself
// included). Only this log's order decides it.
func (m *Machine) judgeStaleness(ep *episode, ev *event) {
	if newest, ok := m.maxVersion[ev.policy]; !ok || ev.version > newest {
		m.maxVersion[ev.policy] = ev.version
		m.metaDirty = true
	}
	k := m.set.MaxStaleness
	newest := m.maxVersion[ev.policy]
	if k == 0 || newest-ev.version <= k {
		return
	}
	ev.stale, ev.enc = true, nil
	m.count(func(s *Stats) { s.Pending-- })
	m.deadLetter(ev.src, ev.kind, ev.raw, ev, eventspb.ReasonCode_REASON_CODE_STALE,
		fmt.Sprintf("stale: policy %q version %d is %d behind the newest version %d (bound %d)",
			ev.policy, ev.version, newest-ev.version, newest, k))
	ev.release()
}

// afterWatermarks closes the episodes the watermarks passed and finishes
// truncated steps whose next state can no longer arrive.
func (m *Machine) afterWatermarks(oldMin, oldObs int64) {
	if nw := m.watermark(KindObs); nw != oldObs && len(m.truncWait) > 0 {
		for _, id := range sortedKeys(m.truncWait) {
			ep := m.episodes[id]
			if ep == nil || ep.doneAt < 0 || ep.emitted[uint32(ep.doneAt)] {
				delete(m.truncWait, id)
				continue
			}
			m.tryEmit(ep, uint32(ep.doneAt))
			m.trySummary(ep)
			if ep.emitted[uint32(ep.doneAt)] {
				delete(m.truncWait, id)
			}
		}
	}
	if nw := m.minWatermark(); nw != oldMin {
		m.closeUpTo(nw)
	}
}

// watermark returns kind's watermark, or minWatermarkNone when the kind was
// never seen.
func (m *Machine) watermark(k Kind) int64 {
	if !m.seen[k] {
		return minWatermarkNone
	}
	return m.maxTime[k] - m.window
}

const minWatermarkNone = -1 << 63

// minWatermark is the smallest of the three input watermarks: an event
// older than it is late on every input.
func (m *Machine) minWatermark() int64 {
	w := m.watermark(KindObs)
	w = min(w, m.watermark(KindAction))
	return min(w, m.watermark(KindReward))
}

// passed reports whether kind's watermark is past t: any record of that
// kind still to come is either late or more than W after t.
func (m *Machine) passed(k Kind, t int64) bool {
	return m.seen[k] && m.maxTime[k]-m.window > t
}

func (m *Machine) within(a, b int64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= m.window
}

// count applies f to both the running delta and the machine's totals.
func (m *Machine) count(f func(*Stats)) {
	f(&m.out.Stats)
	f(&m.total)
}

func (m *Machine) drop(src Source, id, reason string) {
	m.out.Drops = append(m.out.Drops, Drop{Reason: reason, Source: src, EventID: id})
	m.count(func(s *Stats) { s.Dropped[reason]++ })
}

// deadLetter writes rec to the dlq; ev is nil for undecodable records.
func (m *Machine) deadLetter(src Source, k Kind, payload []byte, ev *event, code eventspb.ReasonCode, reason string) {
	env := &eventspb.Envelope{
		EventId:            deadLetterID(m.fp, src),
		SchemaVersion:      eventspb.SchemaVersion,
		Producer:           m.producer,
		ProducedAtUnixNano: src.Timestamp,
	}
	if ev != nil {
		env.EpisodeId, env.Step, env.ProducedAtUnixNano = ev.episode, ev.step, ev.time
	}
	m.out.DeadLetters = append(m.out.DeadLetters, eventspb.NewDeadLetter(env, eventspb.DeadLetterSource{
		Topic: src.Topic, Partition: src.Partition, Offset: src.Offset, Key: src.Key, Payload: payload, TimestampUnixNano: src.Timestamp,
	}, "joiner", k.messageType(), code, reason))
	m.count(func(s *Stats) { s.DeadLettered[code]++ })
}

// Finish moves every input's watermark past the end of time: truncated
// last steps take what next state they have and every open episode closes,
// its leftovers dead-lettered or dropped with their reasons. A replay of a
// bounded history calls it once after the last record; the service never
// does (its input has no end).
func (m *Machine) Finish() {
	oldMin, oldObs := m.minWatermark(), m.watermark(KindObs)
	for _, k := range []Kind{KindObs, KindAction, KindReward} {
		m.seen[k] = true
		m.maxTime[k] = math.MaxInt64 / 2
	}
	m.metaDirty = true
	m.afterWatermarks(oldMin, oldObs)
}
