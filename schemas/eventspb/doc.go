// Package eventspb owns the wire format of every AsyncWebRL event: the Go
// code generated from schemas/asyncwebrl/v1/events.proto (events.pb.go, never
// edited by hand; regenerate with schemas/gen.sh) and the codec around it.
//
// The codec is the one place where producers stamp envelopes (NewEnvelope),
// encode (Marshal, which validates first so a producer bug fails at the
// producer, not in a consumer's dead-letter queue) and where consumers decode
// (Decode and the typed DecodeX helpers). A decode failure is a *DecodeError
// carrying the dead-letter ReasonCode, so consumers can route it to the dlq
// topic without inspecting error strings.
//
// The package also holds the schema's guards: testdata/schema.golden is a
// snapshot of every field and enum value, and compat_test.go fails when a
// change would break readers of events already on Kafka or in ClickHouse.
package eventspb
