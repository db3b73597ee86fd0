// Package replay rebuilds training data from the event log, the system's
// source of truth: Join re-runs the joiner's deterministic state machine
// over a bounded history (from Kafka, or from the ClickHouse archive once
// Kafka's retention dropped it) with other settings, into a new
// transitions topic; the same history and settings always give the same
// transitions, byte for byte.
package replay
