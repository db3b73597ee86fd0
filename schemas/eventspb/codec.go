package eventspb

import (
	"fmt"

	"google.golang.org/protobuf/proto"
)

// Event is a top-level message of one topic: it starts with an Envelope and
// knows its own schema rules. Only this package's messages implement it.
type Event interface {
	proto.Message
	GetEnvelope() *Envelope
	validate() error
}

// Deterministic so that a re-sent event has the same bytes (map order in
// Weights.metrics would differ otherwise), which keeps idempotent writes and
// byte-level de-duplication honest.
var marshalOptions = proto.MarshalOptions{Deterministic: true}

// Unknown fields are kept (the default) so that a consumer built with an
// older schema re-encodes newer events without losing their added fields.
var unmarshalOptions = proto.UnmarshalOptions{}

// Marshal encodes msg. Events are validated first, with the same rules the
// decoders apply, so an invalid event fails at its producer.
func Marshal(msg proto.Message) ([]byte, error) {
	name := typeName(msg)
	if ev, ok := msg.(Event); ok {
		if err := Validate(ev); err != nil {
			return nil, fmt.Errorf("unable to marshal %s: %w", name, err)
		}
	}
	b, err := marshalOptions.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("unable to marshal %s: %w", name, err)
	}
	return b, nil
}

// Decode unmarshals b into a new T and validates it; use it as
// Decode[Observation](b). Errors are *DecodeError.
func Decode[T any, M interface {
	*T
	Event
}](b []byte) (M, error) {
	m := M(new(T))
	if err := unmarshalOptions.Unmarshal(b, m); err != nil {
		return nil, &DecodeError{Type: typeName(m), Reason: ReasonCode_REASON_CODE_DECODE_ERROR, Err: err}
	}
	if err := Validate(m); err != nil {
		return nil, &DecodeError{Type: typeName(m), Reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, Err: err}
	}
	return m, nil
}

// DecodeTask decodes a record of the tasks topic.
func DecodeTask(b []byte) (*Task, error) { return Decode[Task](b) }

// DecodeObservation decodes a record of the obs topic.
func DecodeObservation(b []byte) (*Observation, error) { return Decode[Observation](b) }

// DecodeAction decodes a record of the actions topic.
func DecodeAction(b []byte) (*Action, error) { return Decode[Action](b) }

// DecodeReward decodes a record of the rewards topic.
func DecodeReward(b []byte) (*Reward, error) { return Decode[Reward](b) }

// DecodeTelemetry decodes a record of the telemetry topic.
func DecodeTelemetry(b []byte) (*Telemetry, error) { return Decode[Telemetry](b) }

// DecodeTransition decodes a record of the transitions topic.
func DecodeTransition(b []byte) (*Transition, error) { return Decode[Transition](b) }

// DecodeEpisode decodes a record of the episodes topic.
func DecodeEpisode(b []byte) (*Episode, error) { return Decode[Episode](b) }

// DecodeWeights decodes a record of the weights topic.
func DecodeWeights(b []byte) (*Weights, error) { return Decode[Weights](b) }

// DecodeDeadLetter decodes a record of the dlq topic.
func DecodeDeadLetter(b []byte) (*DeadLetter, error) { return Decode[DeadLetter](b) }

func typeName(m proto.Message) string {
	if m == nil {
		return "<nil>"
	}
	return string(m.ProtoReflect().Descriptor().Name())
}
