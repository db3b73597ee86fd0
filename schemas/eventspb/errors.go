package eventspb

import "errors"

// DecodeError is returned by every decoder. Consumers dead-letter the record
// with Reason as its reason code and Error() as its reason text.
type DecodeError struct {
	// Type is the short message name, e.g. "Observation".
	Type string
	// Reason is REASON_CODE_DECODE_ERROR when the bytes are not a valid
	// message and REASON_CODE_SCHEMA_INVALID when a schema rule is broken.
	Reason ReasonCode
	Err    error
}

func (e *DecodeError) Error() string { return "unable to decode " + e.Type + ": " + e.Err.Error() }

func (e *DecodeError) Unwrap() error { return e.Err }

// ReasonCodeOf returns the dead-letter reason for err: the DecodeError's
// reason when err wraps one, REASON_CODE_OTHER otherwise.
func ReasonCodeOf(err error) ReasonCode {
	if de, ok := errors.AsType[*DecodeError](err); ok {
		return de.Reason
	}
	return ReasonCode_REASON_CODE_OTHER
}
