// Package joiner owns the join of the raw event log into training data: the
// obs, actions and rewards topics in, exactly-once transitions, episode
// summaries and dead letters out.
//
// It has two layers.
//
// Machine is the join itself: a pure, deterministic state machine for one
// input partition number (the three input topics are co-partitioned by
// episode id). It reads no clock and does no I/O; time is the events'
// envelope.produced_at. Its rules are written so that every decision depends
// on the order of one input log only, never on how the three logs happen to
// interleave when they are consumed, which is what makes a replay of the same
// history with the same Settings produce the same transitions:
//
//   - a record is late, and dead-lettered, when its event time is more than
//     the late window W behind the largest event time already seen on its own
//     topic-partition (that topic's watermark);
//   - a duplicate (same envelope.event_id) of an event of an open episode is
//     dropped; an event can only reach a closed episode if it is late;
//   - step t becomes a transition once a_t, r_t, the stable state s_t and the
//     stable next state s_t+1 (or a terminal reward) are present and each
//     lies within W of a_t; among several stable frames of a step the one
//     a_t.obs_event_id names is s_t, otherwise the first eligible one in log
//     order; the next state is the first eligible stable frame of step t+1 in
//     log order, which the transition names by reference (its event id and
//     the obs record's topic, partition and offset) rather than embeds;
//   - an episode closes when every input watermark is W past its last
//     event: an episode's events are never more than W apart in event time,
//     so whatever of it could still arrive would be late. Only then are its
//     leftovers dead-lettered (MISSING_ACTION, JOIN_TIMEOUT, STALE) or
//     dropped with a reason, because only then is the set of its events
//     final.
//
// Every consumed record ends as part of a transition, a dead letter or a
// counted drop with a reason; Stats proves it (Consumed + Restored equals
// Joined + DeadLettered + Dropped + Pending at every moment).
//
// The join is specified by the golden files in testdata/ (rewrite them
// with go test -run TestGolden -rewrite); TestDeterministicAcrossInterleavings
// checks the determinism claim on random histories.
//
// Service is the Kafka side (app.Service): a consumer group over the three
// input topics with the range balancer, one Machine per assigned partition,
// and one Kafka transaction per polled batch that holds the outputs, the
// changed join state (the compacted joiner-changelog topic, same partition
// number as the input) and the consumed offsets. A new owner of a partition
// rebuilds its Machine from the changelog (read_committed, to the end it saw,
// waiting for a dead owner's open transaction to be aborted) before it
// joins the partition's first batch, so a rebalance or a kill -9 neither
// loses nor duplicates a transition. An aborted transaction rebuilds the
// batch's machines the same way, since the offsets went back too.
package joiner
