package joiner

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// Changelog keys. An episode's record is replaced on every change and
// becomes a tombstone when the episode closes, so the compacted topic holds
// exactly the open episodes.
const (
	partitionStateKey = "partition-state"
	episodeKeyPrefix  = "ep/"
	stateFormat       = 1
)

// Deterministic so that equal states have equal bytes (the tests compare
// snapshots byte for byte).
var stateMarshal = proto.MarshalOptions{Deterministic: true}

// changelog returns the records of what changed since the last call.
func (m *Machine) changelog() ([]ChangelogRecord, error) {
	var recs []ChangelogRecord
	for _, id := range sortedKeys(m.dirty) {
		rec := ChangelogRecord{Key: episodeKeyPrefix + id}
		if ep := m.episodes[id]; ep != nil {
			b, err := m.encodeEpisode(ep)
			if err != nil {
				return nil, err
			}
			rec.Value = b
		}
		recs = append(recs, rec)
	}
	clear(m.dirty)
	if m.metaDirty {
		b, err := m.encodeMeta()
		if err != nil {
			return nil, err
		}
		recs = append(recs, ChangelogRecord{Key: partitionStateKey, Value: b})
		m.metaDirty = false
	}
	return recs, nil
}

// Snapshot returns the whole state as changelog records in key order: what
// a compacted changelog holds for this partition.
func (m *Machine) Snapshot() ([]ChangelogRecord, error) {
	meta, err := m.encodeMeta()
	if err != nil {
		return nil, err
	}
	recs := []ChangelogRecord{{Key: partitionStateKey, Value: meta}}
	for _, id := range sortedKeys(m.episodes) {
		b, err := m.encodeEpisode(m.episodes[id])
		if err != nil {
			return nil, err
		}
		recs = append(recs, ChangelogRecord{Key: episodeKeyPrefix + id, Value: b})
	}
	slices.SortFunc(recs, func(a, b ChangelogRecord) int { return strings.Compare(a.Key, b.Key) })
	return recs, nil
}

func (m *Machine) encodeMeta() ([]byte, error) {
	st := &eventspb.JoinPartitionState{Format: stateFormat, Settings: m.fp, MaxPolicyVersions: m.maxVersion}
	for _, k := range []Kind{KindObs, KindAction, KindReward} {
		if m.seen[k] {
			st.Watermarks = append(st.Watermarks, &eventspb.JoinWatermark{Kind: k.proto(), MaxEventTimeUnixNano: m.maxTime[k]})
		}
	}
	b, err := stateMarshal.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("unable to encode partition state: %w", err)
	}
	return b, nil
}

func (m *Machine) encodeEpisode(ep *episode) ([]byte, error) {
	st := &eventspb.JoinEpisodeState{
		EpisodeId:             ep.id,
		SummaryEmitted:        ep.summary,
		Task:                  ep.task,
		LastEventTimeUnixNano: ep.last,
	}
	for t := range ep.emitted {
		st.EmittedSteps = append(st.EmittedSteps, t)
	}
	slices.Sort(st.EmittedSteps)
	head, err := stateMarshal.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("unable to encode state of episode %s: %w", ep.id, err)
	}
	// The events follow as field 2, each encoded once and cached until it
	// changes: an episode is rewritten on every change, and most of its
	// events are settled and never change again.
	size := len(head)
	for _, e := range ep.events {
		if e.enc == nil {
			e.enc = appendEvent(nil, e)
		}
		size += 1 + protowire.SizeBytes(len(e.enc))
	}
	b := make([]byte, 0, size)
	b = append(b, head...)
	for _, e := range ep.events {
		b = appendMessage(b, 2, e.enc)
	}
	return b, nil
}

// Field numbers of eventspb.JoinEvent.
const (
	jeKind = iota + 1
	jeEventID
	jeStep
	jeTime
	jeSourceTopic
	jeSourcePartition
	jeSourceOffset
	jeSourceKey
	jeSourceTimestamp
	jePayload
	jeJoined
	jeStale
	jeCandidate     = 20
	jePolicyVersion = 21
	jePolicyName    = 22
	jeReward        = 23
	jeDone          = 24
	jeSuccess       = 25
	jeTruncated     = 26
	jeAborted       = 27
	jeObsEventID    = 28
	jeOrigin        = 29
	jeRawReward     = 30
	jeDecayed       = 31
)

// appendEvent encodes what a restored machine needs of e as an
// eventspb.JoinEvent (by hand: it is the changelog's hot path): its
// identity and facts, and its source while its fate is open (a dead letter
// points at it) or a transition still needs its bytes. The bytes
// themselves are not written: the input record at the source holds them,
// and a restore reads them back (MissingPayloads, FillPayload). Writing
// them made the changelog larger than the input it joined (73 MB for the
// benchmark's 60 MB), each pending frame rewritten with its episode in
// every transaction that touched the episode.
func appendEvent(b []byte, e *event) []byte {
	b = appendVarint(b, jeKind, uint64(e.kind))
	b = appendString(b, jeEventID, e.id)
	b = appendVarint(b, jeStep, uint64(e.step))
	b = appendVarint(b, jeTime, uint64(e.time))
	if e.refersToSource() {
		b = appendString(b, jeSourceTopic, e.src.Topic)
		b = appendVarint(b, jeSourcePartition, uint64(int64(e.src.Partition)))
		b = appendVarint(b, jeSourceOffset, uint64(e.src.Offset))
		if len(e.src.Key) > 0 {
			b = appendMessage(b, jeSourceKey, e.src.Key)
		}
		b = appendVarint(b, jeSourceTimestamp, uint64(e.src.Timestamp))
	}
	b = appendBool(b, jeJoined, e.joined)
	b = appendBool(b, jeStale, e.stale)
	b = appendBool(b, jeCandidate, e.candidate)
	b = appendVarint(b, jePolicyVersion, e.version)
	b = appendString(b, jePolicyName, e.policy)
	b = appendDouble(b, jeReward, e.reward)
	b = appendBool(b, jeDone, e.done)
	b = appendBool(b, jeSuccess, e.success)
	b = appendBool(b, jeTruncated, e.truncated)
	b = appendBool(b, jeAborted, e.aborted)
	b = appendString(b, jeObsEventID, e.ref)
	b = appendVarint(b, jeOrigin, uint64(e.origin))
	b = appendDouble(b, jeRawReward, e.rawReward)
	return appendDouble(b, jeDecayed, e.decayed)
}

// Restore applies one changelog record (a nil value is a tombstone). Apply
// the records of the machine's changelog partition in log order before the
// first Apply; later records of a key replace earlier ones, as compaction
// would.
func (m *Machine) Restore(key string, value []byte) error {
	switch {
	case key == partitionStateKey:
		if value == nil {
			return nil
		}
		return m.restoreMeta(value)
	case strings.HasPrefix(key, episodeKeyPrefix):
		id := strings.TrimPrefix(key, episodeKeyPrefix)
		if old := m.episodes[id]; old != nil {
			m.forget(old)
		}
		if value == nil {
			return nil
		}
		ep, err := m.decodeEpisode(value)
		if err != nil {
			return fmt.Errorf("unable to restore episode %s: %w", id, err)
		}
		if ep.id != id {
			return fmt.Errorf("unable to restore episode %s: record holds episode %s", id, ep.id)
		}
		m.episodes[id] = ep
		for _, e := range ep.events {
			if e.needPayload {
				m.missing[sourceKey(e.src)] = e
			}
		}
		m.closing.push(id, ep.last)
		ep.queued = ep.last
		if ep.doneAt >= 0 && !ep.emitted[uint32(ep.doneAt)] && ep.steps[uint32(ep.doneAt)].firstReward().truncated {
			m.truncWait[id] = true
		}
		n := int64(0)
		for _, e := range ep.events {
			if !e.settled() {
				n++
			}
		}
		m.total.Restored += n
		m.total.Pending += n
		return nil
	}
	return fmt.Errorf("unable to restore: unknown changelog key %q", key)
}

// forget removes a restored episode that a later record replaces.
func (m *Machine) forget(ep *episode) {
	for _, e := range ep.events {
		if !e.settled() {
			m.total.Restored--
			m.total.Pending--
		}
	}
	delete(m.episodes, ep.id)
	delete(m.truncWait, ep.id)
	for _, e := range ep.events {
		if e.needPayload {
			delete(m.missing, sourceKey(e.src))
		}
	}
}

// srcKey names an input record.
type srcKey struct {
	topic     string
	partition int32
	offset    int64
}

func sourceKey(s Source) srcKey { return srcKey{s.Topic, s.Partition, s.Offset} }

// MissingPayloads returns the sources of the restored events whose record
// must be read again (FillPayload) before the machine joins anything, in
// topic and offset order.
func (m *Machine) MissingPayloads() []Source {
	out := make([]Source, 0, len(m.missing))
	for _, e := range m.missing {
		out = append(out, e.src)
	}
	slices.SortFunc(out, func(a, b Source) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset))
	})
	return out
}

// FillPayload hands a restored event the value of its source record. The
// record must be the event the changelog named: same kind of message and
// same event id.
func (m *Machine) FillPayload(src Source, value []byte) error {
	k := sourceKey(src)
	e := m.missing[k]
	if e == nil {
		return fmt.Errorf("unable to restore %s[%d]@%d: no restored event refers to it", src.Topic, src.Partition, src.Offset)
	}
	d, err := decode(Record{Kind: e.kind, Source: e.src, Value: value}, m.set)
	if err != nil {
		return fmt.Errorf("unable to restore event %s from %s[%d]@%d: %w", e.id, src.Topic, src.Partition, src.Offset, err)
	}
	if d.id != e.id {
		return fmt.Errorf("unable to restore event %s: %s[%d]@%d holds event %s", e.id, src.Topic, src.Partition, src.Offset, d.id)
	}
	e.raw, e.obs, e.act, e.rew = bytes.Clone(value), d.obs, d.act, d.rew
	e.needPayload = false
	delete(m.missing, k)
	return nil
}

func (m *Machine) restoreMeta(value []byte) error {
	var st eventspb.JoinPartitionState
	if err := proto.Unmarshal(value, &st); err != nil {
		return fmt.Errorf("unable to restore partition state: %w", err)
	}
	if st.GetFormat() > stateFormat {
		return fmt.Errorf("unable to restore partition state: format %d is newer than this joiner's %d", st.GetFormat(), stateFormat)
	}
	m.seen = [4]bool{}
	for _, w := range st.GetWatermarks() {
		k := Kind(w.GetKind())
		if !k.valid() {
			return fmt.Errorf("unable to restore partition state: unknown kind %v", w.GetKind())
		}
		m.seen[k], m.maxTime[k] = true, w.GetMaxEventTimeUnixNano()
	}
	m.maxVersion = map[string]uint64{}
	for k, v := range st.GetMaxPolicyVersions() {
		m.maxVersion[k] = v
	}
	return nil
}

func (m *Machine) decodeEpisode(value []byte) (*episode, error) {
	var st eventspb.JoinEpisodeState
	if err := proto.Unmarshal(value, &st); err != nil {
		return nil, err
	}
	ep := newEpisode(st.GetEpisodeId())
	ep.summary = st.GetSummaryEmitted()
	ep.task = st.GetTask()
	ep.last = st.GetLastEventTimeUnixNano()
	for _, t := range st.GetEmittedSteps() {
		ep.emitted[t] = true
	}
	for _, je := range st.GetEvents() {
		k := Kind(je.GetKind())
		if !k.valid() {
			return nil, fmt.Errorf("event %s has unknown kind %v", je.GetEventId(), je.GetKind())
		}
		src := Source{
			Topic:     je.GetSourceTopic(),
			Partition: je.GetSourcePartition(),
			Offset:    je.GetSourceOffset(),
			Key:       je.GetSourceKey(),
			Timestamp: je.GetSourceTimestampUnixNano(),
		}
		e := &event{kind: k, src: src}
		if p := je.GetPayload(); len(p) > 0 {
			// Written by a joiner before payloads were references.
			d, err := decode(Record{Kind: k, Source: src, Value: p}, m.set)
			if err != nil {
				return nil, fmt.Errorf("event %s: %w", je.GetEventId(), err)
			}
			e = d
		} else if src.Topic != "" {
			e.needPayload = true
		}
		e.id, e.episode, e.step, e.time = je.GetEventId(), ep.id, je.GetStep(), je.GetEventTimeUnixNano()
		e.joined, e.stale = je.GetJoined(), je.GetStale()
		e.candidate, e.version, e.policy, e.ref, e.origin = je.GetCandidate(), je.GetPolicyVersion(), je.GetPolicyName(), je.GetObsEventId(), je.GetOrigin()
		e.reward, e.done, e.success, e.truncated, e.aborted = je.GetReward(), je.GetDone(), je.GetSuccess(), je.GetTruncated(), je.GetAborted()
		e.rawReward, e.decayed = je.GetRawReward(), je.GetDecayedReward()
		ep.add(e)
	}
	for t, s := range ep.steps {
		r := s.firstReward()
		if r == nil {
			continue
		}
		if (r.done || r.aborted) && (ep.doneAt < 0 || int64(t) < ep.doneAt) {
			ep.doneAt = int64(t)
		}
		if r.aborted && (ep.abortAt < 0 || int64(t) < ep.abortAt) {
			ep.abortAt = int64(t)
		}
	}
	return ep, nil
}
