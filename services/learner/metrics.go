package learner

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/asyncwebrl/asyncwebrl/services/internal/prom"
)

const settledHelp = "Weights commits of unknown outcome settled by claiming the producer again, " +
	"by outcome (committed: it had gone through; republished: published again)."

// metrics: labels are reasons and sources, never per-record values.
type metrics struct {
	consumed      prometheus.Counter
	samples       *prometheus.CounterVec
	skipped       *prometheus.CounterVec
	deadLetters   *prometheus.CounterVec
	bad           *prometheus.CounterVec
	updates       prometheus.Counter
	published     prometheus.Counter
	settled       *prometheus.CounterVec
	version       prometheus.Gauge
	leader        prometheus.Gauge
	leaseChanges  *prometheus.CounterVec
	loss          prometheus.Gauge
	entropy       prometheus.Gauge
	pending       prometheus.Gauge
	behind        prometheus.Gauge
	updateSeconds prometheus.Histogram
	// frozenCache counts the lm backend's samples whose frozen-block
	// output came from the cache (hit) or was computed (miss).
	frozenCache *prometheus.CounterVec
	// The replay's fill, set at each publish: a bounded buffer that grows
	// to its capacity is not a leak (the soak judges memory without it).
	replaySamples, replayCapacity, replayBytes prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	s := prom.New(reg, "learner")
	m := &metrics{
		consumed:    s.Counter("transitions_consumed_total", "Decodable transitions consumed."),
		samples:     s.CounterVec("samples_total", "Samples released to training, by source (policy, demo).", "source"),
		skipped:     s.CounterVec("skipped_total", "Transitions not trained on, by reason.", "reason"),
		deadLetters: s.CounterVec("dead_letters_total", "Transitions sent to the dlq, by reason code.", "reason"),
		bad:         s.CounterVec("bad_inputs_total", "Unusable records on other inputs, by topic.", "topic"),
		updates:     s.Counter("updates_total", "Gradient updates."),
		published:   s.Counter("weights_published_total", "Weights versions published."),
		settled:     s.CounterVec("weights_settled_total", settledHelp, "outcome"),
		version:     s.Gauge("policy_version", "Newest published policy version."),
		leader:      s.Gauge("leader", "1 while this learner leads its policy (holds the lease), 0 while it stands by or its lease is uncertain."),
		leaseChanges: s.CounterVec("lease_changes_total", "Changes of the learner lease's state, by the state entered "+
			"(held, uncertain: the group session errored and publishing pauses, lost: another learner has the lease).", "state"),
		loss:           s.Gauge("loss", "Total loss of the last update."),
		entropy:        s.Gauge("entropy", "Mean policy entropy of the last update."),
		pending:        s.Gauge("pending_transitions", "Transitions waiting for the end of their episode or group."),
		behind:         s.Gauge("versions_behind", "Versions of updates owed to samples already ingested, at the last publish (the staleness bound's measure)."),
		updateSeconds:  s.Histogram("update_seconds", "Time of one gradient update.", prometheus.ExponentialBuckets(0.005, 2, 16)), // to 164 s: an lm update takes seconds to a minute
		frozenCache:    s.CounterVec("lm_frozen_cache_total", "lm backend: samples of an update whose frozen blocks' output was cached (hit), the actor's copy (actor) or computed (computed).", "result"),
		replaySamples:  s.Gauge("replay_samples", "Samples in the replay buffer, at the last publish."),
		replayCapacity: s.Gauge("replay_capacity", "The replay buffer's capacity in samples."),
		replayBytes:    s.Gauge("replay_bytes", "Memory of the replay's samples' inputs, at the last publish."),
	}
	return m, s.Err()
}
