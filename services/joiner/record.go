package joiner

import (
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// Kind is the input topic a record was read from.
type Kind uint8

// Input kinds.
const (
	KindObs Kind = iota + 1
	KindAction
	KindReward
)

var kindNames = [...]string{KindObs: "obs", KindAction: "action", KindReward: "reward"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

func (k Kind) valid() bool { return k >= KindObs && k <= KindReward }

// messageType is the full protobuf name dead letters carry.
func (k Kind) messageType() string {
	switch k {
	case KindObs:
		return "asyncwebrl.v1.Observation"
	case KindAction:
		return "asyncwebrl.v1.Action"
	case KindReward:
		return "asyncwebrl.v1.Reward"
	}
	return ""
}

func (k Kind) proto() eventspb.JoinKind { return eventspb.JoinKind(k) }

// Source is where a record was read: what a dead letter points back to.
type Source struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	// Timestamp is the record's Kafka timestamp, unix nanoseconds.
	Timestamp int64
}

// Record is one consumed input record, not yet decoded.
type Record struct {
	Kind   Kind
	Source Source
	Value  []byte
}
