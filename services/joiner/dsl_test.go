package joiner

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// The golden files speak a small DSL for input events, one per line:
//
//	obs <episode> <step> t=<seconds> [id=X] [unstable] [terminal] [task=T] [group=G]
//	act <episode> <step> t=<seconds> [id=X] [ref=X|ref=-] [v=N] [logp=F] [policy=P]
//	rew <episode> <step> t=<seconds> [id=X] [r=F] [done] [success] [truncated] [aborted]
//	dup <id>                  re-send the exact bytes of an earlier event
//	bad <obs|act|rew> <key>   bytes that are not a protobuf message
//	invalid <obs|act|rew> <episode>  a message that breaks a schema rule
//
// Default ids are <episode>.o<step>, .a<step>, .r<step> (a second event of
// the same kind and step gets a letter suffix); an action names its step's
// default frame unless ref= says otherwise. Times are seconds from an
// arbitrary origin.

// baseTime keeps event times realistic (and never zero).
const baseTime = int64(1_700_000_000) * int64(time.Second)

var topicOf = map[Kind]string{KindObs: "obs", KindAction: "actions", KindReward: "rewards"}

// feeder turns DSL lines into records with per-topic offsets.
type feeder struct {
	offsets map[Kind]int64
	sent    map[string]Record // by event id, for dup
	usedIDs map[string]bool
}

func newFeeder() *feeder {
	return &feeder{offsets: map[Kind]int64{}, sent: map[string]Record{}, usedIDs: map[string]bool{}}
}

func (f *feeder) record(k Kind, key string, value []byte, ts int64) Record {
	off := f.offsets[k]
	f.offsets[k]++
	return Record{Kind: k, Value: value, Source: Source{Topic: topicOf[k], Partition: 0, Offset: off, Key: []byte(key), Timestamp: ts}}
}

func kindOf(s string) (Kind, error) {
	switch s {
	case "obs":
		return KindObs, nil
	case "act":
		return KindAction, nil
	case "rew":
		return KindReward, nil
	}
	return 0, fmt.Errorf("unknown kind %q", s)
}

func (f *feeder) parse(line string) (Record, error) {
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return Record{}, fmt.Errorf("short line %q", line)
	}
	switch fields[0] {
	case "dup":
		r, ok := f.sent[fields[1]]
		if !ok {
			return Record{}, fmt.Errorf("dup of unknown id %q", fields[1])
		}
		return f.record(r.Kind, string(r.Source.Key), r.Value, r.Source.Timestamp), nil
	case "bad":
		k, err := kindOf(fields[1])
		if err != nil || len(fields) < 3 {
			return Record{}, fmt.Errorf("bad <kind> <key>: %q", line)
		}
		return f.record(k, fields[2], []byte{0xff, 0xff, 0xff, 0x01}, baseTime), nil
	case "invalid":
		k, err := kindOf(fields[1])
		if err != nil || len(fields) < 3 {
			return Record{}, fmt.Errorf("invalid <kind> <episode>: %q", line)
		}
		env := &eventspb.Envelope{SchemaVersion: 1, EpisodeId: fields[2], ProducedAtUnixNano: baseTime} // no event id
		var msg interface{ ProtoReflect() protoreflectMessage }
		switch k {
		case KindObs:
			msg = &eventspb.Observation{Envelope: env}
		case KindAction:
			msg = &eventspb.Action{Envelope: env, Type: eventspb.ActionType_ACTION_TYPE_CLICK}
		case KindReward:
			msg = &eventspb.Reward{Envelope: env}
		}
		b, err := rawMarshal(msg)
		if err != nil {
			return Record{}, err
		}
		return f.record(k, fields[2], b, baseTime), nil
	}
	k, err := kindOf(fields[0])
	if err != nil {
		return Record{}, err
	}
	if len(fields) < 4 {
		return Record{}, fmt.Errorf("want <kind> <episode> <step> t=<s>: %q", line)
	}
	ep := fields[1]
	step, err := strconv.ParseUint(fields[2], 10, 32)
	if err != nil {
		return Record{}, fmt.Errorf("step: %w", err)
	}
	letter := map[Kind]string{KindObs: "o", KindAction: "a", KindReward: "r"}[k]
	id := fmt.Sprintf("%s.%s%d", ep, letter, step)
	for suffix := 'b'; f.usedIDs[id]; suffix++ {
		id = fmt.Sprintf("%s.%s%d%c", ep, letter, step, suffix)
	}
	opts := map[string]string{}
	flags := map[string]bool{}
	for _, kv := range fields[3:] {
		if k, v, ok := strings.Cut(kv, "="); ok {
			opts[k] = v
		} else {
			flags[kv] = true
		}
	}
	if v, ok := opts["id"]; ok {
		id = v
	}
	secs, err := strconv.ParseFloat(opts["t"], 64)
	if err != nil {
		return Record{}, fmt.Errorf("t=: %w", err)
	}
	ts := baseTime + int64(math.Round(secs*1e9))
	env := &eventspb.Envelope{EventId: id, SchemaVersion: 1, Producer: "dsl", ProducedAtUnixNano: ts, EpisodeId: ep, Step: uint32(step), Source: eventspb.Source_SOURCE_SYNTHETIC}
	num := func(key string, def float64) float64 {
		if v, ok := opts[key]; ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
		return def
	}
	str := func(key, def string) string {
		if v, ok := opts[key]; ok {
			return v
		}
		return def
	}
	var msg eventspb.Event
	switch k {
	case KindObs:
		msg = &eventspb.Observation{
			Envelope: env,
			Task:     &eventspb.TaskRef{TaskId: str("task", "task1"), GroupId: str("group", "g1"), Family: "click", Site: "site1", Tier: eventspb.Tier_TIER_EASY},
			Stable:   !flags["unstable"],
			Terminal: flags["terminal"],
			Timings:  &eventspb.ObservationTimings{ObserveMs: 5, SettleMs: 40},
		}
	case KindAction:
		ref := str("ref", fmt.Sprintf("%s.o%d", ep, step))
		if ref == "-" {
			ref = ""
		}
		msg = &eventspb.Action{
			Envelope:           env,
			Type:               eventspb.ActionType_ACTION_TYPE_CLICK,
			Bid:                "b1",
			ObsEventId:         ref,
			LogProb:            num("logp", -1),
			PolicyName:         str("policy", "p"),
			PolicyVersion:      uint64(num("v", 1)),
			InferenceLatencyUs: 1500,
		}
	case KindReward:
		msg = &eventspb.Reward{
			Envelope:  env,
			Reward:    num("r", 0),
			Done:      flags["done"] || flags["aborted"],
			Success:   flags["success"],
			Truncated: flags["truncated"],
			Aborted:   flags["aborted"],
		}
	}
	b, err := eventspb.Marshal(msg)
	if err != nil {
		return Record{}, err
	}
	f.usedIDs[id] = true
	rec := f.record(k, ep, b, ts)
	f.sent[id] = rec
	return rec, nil
}

// printer renders outputs with times relative to baseTime.
type printer struct{ buf bytes.Buffer }

func secs(ns int64) string {
	return strconv.FormatFloat(float64(ns-baseTime)/1e9, 'f', -1, 64) + "s"
}

func (p *printer) output(out Output) {
	for _, tr := range out.Transitions {
		next := "-"
		if tr.NextObsEventId != "" {
			next = fmt.Sprintf("%s@%s/%d/%d", tr.NextObsEventId, tr.NextObsTopic, tr.NextObsPartition, tr.NextObsOffset)
		}
		fmt.Fprintf(&p.buf, "transition %s/%d: s=%s a=%s r=%g s'=%s v=%d logp=%g task=%s group=%s t=%s step_ms=%d%s\n",
			tr.EpisodeId, tr.Step, tr.Obs.GetEnvelope().GetEventId(), tr.Action.GetEnvelope().GetEventId(), tr.Reward, next,
			tr.PolicyVersion, tr.LogProbOld, tr.TaskId, tr.GroupId, secs(tr.Envelope.GetProducedAtUnixNano()), tr.Timings.GetStepMs(),
			flags(tr.Done, "done", tr.Truncated, "truncated", tr.Success, "success"))
	}
	for _, dl := range out.DeadLetters {
		where := "-"
		if e := dl.Envelope.GetEpisodeId(); e != "" {
			where = fmt.Sprintf("%s/%d", e, dl.Envelope.GetStep())
		}
		id := ""
		if ev, err := decodeAny(dl.MessageType, dl.Payload); err == nil {
			id = " id=" + ev
		}
		// protobuf-go randomizes the spaces of its error texts per build
		// (a regular or a non-breaking space) so nobody depends on them.
		reason := strings.ReplaceAll(dl.Reason, "\u00a0", " ")
		fmt.Fprintf(&p.buf, "dlq %s %s %s@%d%s: %s\n", where, strings.TrimPrefix(dl.ReasonCode.String(), "REASON_CODE_"), dl.SourceTopic, dl.SourceOffset, id, reason)
	}
	for _, d := range out.Drops {
		fmt.Fprintf(&p.buf, "drop %s %s@%d id=%s\n", d.Reason, d.Source.Topic, d.Source.Offset, d.EventID)
	}
	for _, e := range out.Episodes {
		fmt.Fprintf(&p.buf, "episode %s: task=%s len=%d return=%g versions=%v duration=%dms policy=%s%s\n",
			e.EpisodeId, e.TaskId, e.Length, e.TotalReturn, e.PolicyVersionsUsed, e.DurationMs, e.PolicyName,
			flags(e.Success, "success", e.Aborted, "aborted", e.Truncated, "truncated"))
	}
}

func flags(kv ...any) string {
	var s string
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i].(bool) {
			s += " " + kv[i+1].(string)
		}
	}
	return s
}

func decodeAny(messageType string, b []byte) (string, error) {
	var ev eventspb.Event
	var err error
	switch messageType {
	case "asyncwebrl.v1.Observation":
		ev, err = eventspb.DecodeObservation(b)
	case "asyncwebrl.v1.Action":
		ev, err = eventspb.DecodeAction(b)
	case "asyncwebrl.v1.Reward":
		ev, err = eventspb.DecodeReward(b)
	default:
		return "", fmt.Errorf("unknown type %s", messageType)
	}
	if err != nil {
		return "", err
	}
	return ev.GetEnvelope().GetEventId(), nil
}

func (p *printer) stats(s Stats) {
	fmt.Fprintf(&p.buf, "consumed=%d restored=%d joined=%d pending=%d transitions=%d episodes=%d abandoned=%d\n",
		s.Consumed, s.Restored, s.Joined, s.Pending, s.Transitions, s.Episodes, s.EpisodesAbandoned)
	for _, code := range sortedCodes(s.DeadLettered) {
		fmt.Fprintf(&p.buf, "dlq %s=%d\n", strings.TrimPrefix(code.String(), "REASON_CODE_"), s.DeadLettered[code])
	}
	for _, r := range sortedKeys(s.Dropped) {
		fmt.Fprintf(&p.buf, "drop %s=%d\n", r, s.Dropped[r])
	}
}

func sortedCodes(m map[eventspb.ReasonCode]int64) []eventspb.ReasonCode {
	var out []eventspb.ReasonCode
	for k, v := range m {
		if v != 0 {
			out = append(out, k)
		}
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// checkOutput marshals every output with the codec, which validates it as
// a consumer would.
func checkOutput(t *testing.T, out Output) {
	t.Helper()
	for i, tr := range out.Transitions {
		if tr.NextObs != nil {
			t.Fatalf("transition %s/%d embeds its next state; it goes by reference (next_obs_event_id)", tr.EpisodeId, tr.Step)
		}
		want, err := eventspb.Marshal(tr)
		if err != nil {
			t.Fatalf("invalid transition: %v", err)
		}
		// The spliced encoding the service writes is the same message,
		// and with canonical inputs the same bytes.
		got, err := out.MarshalTransition(i, tr.Timings.GetJoinMs())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			dec, err := eventspb.DecodeTransition(got)
			if err != nil || !proto.Equal(dec, tr) {
				t.Fatalf("spliced transition %s/%d differs from the machine's (decode err %v)", tr.EpisodeId, tr.Step, err)
			}
			t.Fatalf("spliced transition %s/%d is the same message but other bytes", tr.EpisodeId, tr.Step)
		}
	}
	for _, e := range out.Episodes {
		if _, err := eventspb.Marshal(e); err != nil {
			t.Fatalf("invalid episode: %v", err)
		}
	}
	for _, d := range out.DeadLetters {
		if _, err := eventspb.Marshal(d); err != nil {
			t.Fatalf("invalid dead letter: %v", err)
		}
	}
}
