// Package recorderload is the recorder's synthetic traffic and its insert
// benchmark: a deterministic generator of small events of every topic
// (mostly actions, rewards and telemetry, some observations with tiny
// frames, plus undecodable records), a producer for them, and Bench, which
// measures the recorder's rows/s against a bare clickhouse-go batch insert of
// the same rows. It is used by `asyncwebrl bench recorder` and by the
// recorder's acceptance test.
//
// It is separate from package loadtest (the joiner's traffic) so that the
// two can evolve without touching each other.
package recorderload
