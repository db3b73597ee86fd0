package learner

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
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
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	var errs []error
	reg1 := func(c prometheus.Collector) {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	ns, sub := "asyncwebrl", "learner"
	c := func(name, help string) prometheus.Counter {
		x := prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help})
		reg1(x)
		return x
	}
	cv := func(name, help, label string) *prometheus.CounterVec {
		x := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help}, []string{label})
		reg1(x)
		return x
	}
	g := func(name, help string) prometheus.Gauge {
		x := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help})
		reg1(x)
		return x
	}
	m := &metrics{
		consumed:    c("transitions_consumed_total", "Decodable transitions consumed."),
		samples:     cv("samples_total", "Samples released to training, by source (policy, demo).", "source"),
		skipped:     cv("skipped_total", "Transitions not trained on, by reason.", "reason"),
		deadLetters: cv("dead_letters_total", "Transitions sent to the dlq, by reason code.", "reason"),
		bad:         cv("bad_inputs_total", "Unusable records on other inputs, by topic.", "topic"),
		updates:     c("updates_total", "Gradient updates."),
		published:   c("weights_published_total", "Weights versions published."),
		settled:     cv("weights_settled_total", settledHelp, "outcome"),
		version:     g("policy_version", "Newest published policy version."),
		leader:      g("leader", "1 while this learner leads its policy (holds the lease), 0 while it stands by or its lease is uncertain."),
		leaseChanges: cv("lease_changes_total", "Changes of the learner lease's state, by the state entered "+
			"(held, uncertain: the group session errored and publishing pauses, lost: another learner has the lease).", "state"),
		loss:    g("loss", "Total loss of the last update."),
		entropy: g("entropy", "Mean policy entropy of the last update."),
		pending: g("pending_transitions", "Transitions waiting for the end of their episode or group."),
		behind:  g("versions_behind", "Versions of updates owed to samples already ingested, at the last publish (the staleness bound's measure)."),
		updateSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "update_seconds",
			Help: "Time of one gradient update.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 12)}),
	}
	reg1(m.updateSeconds)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("unable to register learner metrics: %w", err)
	}
	return m, nil
}
