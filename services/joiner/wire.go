package joiner

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// Field numbers of eventspb.Transition, in wire order.
const (
	trEnvelope      = 1
	trEpisodeID     = 2
	trStep          = 3
	trObs           = 5
	trAction        = 6
	trReward        = 7
	trDone          = 9
	trLogProbOld    = 10
	trPolicyVersion = 11
	trPolicyName    = 12
	trGroupID       = 15
	trTaskID        = 16
	trFamily        = 17
	trSite          = 18
	trTier          = 19
	trSuccess       = 20
	trTruncated     = 21
	trTimings       = 25
	trNextObsID     = 26
	trNextObsTopic  = 27
	trNextObsPart   = 28
	trNextObsOffset = 29
)

// transitionParts are the verbatim input records a transition embeds: the
// state and the action. The next state goes by reference (next_obs_*).
type transitionParts struct {
	obs, action []byte
}

var wireMarshal = proto.MarshalOptions{Deterministic: true}

// MarshalTransition encodes Transitions[i] with timings.join_ms set. The
// state and action are spliced in as the bytes their records carried (they
// were validated when decoded) instead of being encoded again: re-encoding
// the frame was most of the joiner's CPU. The bytes decode to the same
// message the machine built.
func (o *Output) MarshalTransition(i int, joinMs uint32) ([]byte, error) {
	tr := o.Transitions[i]
	tr.Timings.JoinMs = joinMs
	if i >= len(o.parts) || o.parts[i].obs == nil || o.parts[i].action == nil {
		b, err := eventspb.Marshal(tr)
		if err != nil {
			return nil, fmt.Errorf("unable to encode transition %s/%d: %w", tr.EpisodeId, tr.Step, err)
		}
		return b, nil
	}
	p := o.parts[i]
	env, err := wireMarshal.Marshal(tr.Envelope)
	if err != nil {
		return nil, fmt.Errorf("unable to encode transition %s/%d: %w", tr.EpisodeId, tr.Step, err)
	}
	tim, err := wireMarshal.Marshal(tr.Timings)
	if err != nil {
		return nil, fmt.Errorf("unable to encode transition %s/%d: %w", tr.EpisodeId, tr.Step, err)
	}
	b := make([]byte, 0, len(env)+len(tim)+len(p.obs)+len(p.action)+len(tr.NextObsEventId)+len(tr.NextObsTopic)+256)
	b = appendMessage(b, trEnvelope, env)
	b = appendString(b, trEpisodeID, tr.EpisodeId)
	b = appendVarint(b, trStep, uint64(tr.Step))
	b = appendMessage(b, trObs, p.obs)
	b = appendMessage(b, trAction, p.action)
	b = appendDouble(b, trReward, tr.Reward)
	b = appendBool(b, trDone, tr.Done)
	b = appendDouble(b, trLogProbOld, tr.LogProbOld)
	b = appendVarint(b, trPolicyVersion, tr.PolicyVersion)
	b = appendString(b, trPolicyName, tr.PolicyName)
	b = appendString(b, trGroupID, tr.GroupId)
	b = appendString(b, trTaskID, tr.TaskId)
	b = appendString(b, trFamily, tr.Family)
	b = appendString(b, trSite, tr.Site)
	b = appendVarint(b, trTier, uint64(tr.Tier))
	b = appendBool(b, trSuccess, tr.Success)
	b = appendBool(b, trTruncated, tr.Truncated)
	b = appendMessage(b, trTimings, tim)
	b = appendString(b, trNextObsID, tr.NextObsEventId)
	b = appendString(b, trNextObsTopic, tr.NextObsTopic)
	b = appendVarint(b, trNextObsPart, uint64(int64(tr.NextObsPartition)))
	b = appendVarint(b, trNextObsOffset, uint64(tr.NextObsOffset))
	return b, nil
}

// The appenders follow proto3's rule that zero scalars are not written, so
// the result matches a deterministic proto.Marshal of the same message.

func appendMessage(b []byte, num protowire.Number, m []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendBool(b []byte, num protowire.Number, v bool) []byte {
	if !v {
		return b
	}
	return appendVarint(b, num, 1)
}

func appendDouble(b []byte, num protowire.Number, v float64) []byte {
	bits := math.Float64bits(v)
	if bits == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, bits)
}
