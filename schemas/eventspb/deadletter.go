package eventspb

// DeadLetterSource is the record a dead letter is about: where it was read
// and the bytes it held.
type DeadLetterSource struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Payload   []byte
	// TimestampUnixNano is the record's Kafka timestamp.
	TimestampUnixNano int64
}

// NewDeadLetter is the one way a component writes the dlq event for a
// record it cannot use: who gave up on it (component), what the record
// should have held (messageType, e.g. "asyncwebrl.v1.Transition"), why
// (code, and reason in words), and the record itself, so that it can be
// fixed and replayed. env is the dead letter's own envelope; its id should
// derive from the source record (DeterministicID), so that a record
// dead-lettered again after a crash is the same event downstream.
func NewDeadLetter(env *Envelope, src DeadLetterSource, component, messageType string, code ReasonCode, reason string) *DeadLetter {
	return &DeadLetter{
		Envelope:                env,
		SourceTopic:             src.Topic,
		SourcePartition:         src.Partition,
		SourceOffset:            src.Offset,
		SourceKey:               src.Key,
		Payload:                 src.Payload,
		SourceTimestampUnixNano: src.TimestampUnixNano,
		Reason:                  reason,
		ReasonCode:              code,
		Component:               component,
		MessageType:             messageType,
	}
}
