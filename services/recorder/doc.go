// Package recorder is the recorder target: a consumer group over every event
// topic of the catalog that writes each record into its raw ClickHouse table
// (analytics.Rows), in batches, through clickhouse-go's native protocol.
//
// Only what committed is recorded: the consumer reads committed, so events
// of the joiner's aborted transactions (transitions, episodes, dead letters)
// never reach ClickHouse.
//
// Delivery: offsets are committed only after the batch's INSERTs succeeded
// (auto-commit is off, and rebalances are blocked between a poll and the
// commit of what it returned), so a crash or kill -9 loses nothing: the
// uncommitted records are re-delivered and inserted again. Duplicates are
// absorbed by the store, not prevented here: the raw tables are
// ReplacingMergeTrees keyed by event id, every counting query reads them
// with uniqExact/FINAL, and the materialized views only keep duplicate-proof
// aggregate states (see analytics/migrations/0003_views.sql). This is the
// one choice that also covers duplicates the recorder cannot see: a producer
// re-sending an event after a timeout, or an INSERT whose outcome was
// unknown when ClickHouse went away.
//
// ClickHouse down: the failed INSERT is retried with exponential backoff,
// forever, while the batch waits in memory; the consumer stops polling (one
// batch in flight plus one being filled), so franz-go stops fetching once its
// buffer is full: back-pressure, not loss. /healthz reports the outage.
//
// Undecodable records go to the bad_records table with the decoder's reason
// (never dropped, never re-published: the recorder also consumes the dlq
// topic, and a loop must not be possible).
//
// Frames: besides each observation's frame size and sha256, the recorder
// keeps the frame's bytes in the frames table, by hash, for every greedy
// (evaluation) episode and for one training episode in WithFrameSample
// (default 20, a hash of the episode id): what the dashboard's episode view
// shows.
//
// Every LagInterval the recorder also snapshots, through kadm, the committed
// offsets and lag of every consumer group on the catalog's topics into
// consumer_lag.
package recorder
