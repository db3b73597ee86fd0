// Package app owns the lifecycle of the asyncwebrl binary's components: the
// registry of targets, start in a fixed order, stop in reverse under a
// deadline, and the error collection on the way down (temporal's
// server_impl.go and benthos' manager are the models).
//
// A target ("actor", "joiner", ...) is a name bound to a constructor that
// returns one Service. `-target=all` starts every registered target in
// registration order, which is also the dependency order: producers of a
// topic start before its consumers, and the reverse on stop means consumers
// stop (and commit) before the things they read from disappear. Before
// those Stops, the producers stop producing (Producer) and the consumers
// whose output analytics need catch up with their inputs (Drainer), so a
// clean stop leaves every committed event recorded. Every is the loop of the
// services' periodic jobs.
package app
