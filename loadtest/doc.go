// Package loadtest produces synthetic actor traffic (no browsers) and
// verifies what the joiner made of it.
//
// Generator plays N executors that run episodes step by step, publishing
// obs, actions and rewards exactly as actors do, at a configurable rate, and
// spoils a configurable fraction of them: reordered within their episode,
// re-sent with the same event id, or followed by a malformed record. It
// returns the Expected outcome: every (episode, step) transition with the ids
// of the events it must be made of, every episode summary, and the
// coordinates and bytes of every malformed record.
//
// Verify reads the transitions, episodes and dlq topics (read_committed, to
// their end) and proves that every expected transition is there exactly
// once and made of the right events, that nothing unexpected is, and that
// every malformed record is in the dlq.
//
// BenchJoiner runs the joiner against a consume-only baseline on the same
// input, in one run (`asyncwebrl bench joiner`).
package loadtest
