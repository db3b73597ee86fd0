// Package kafka builds the franz-go clients every component uses from the
// one Config: seed brokers, SASL (PLAIN or SCRAM) and TLS, a slog adapter,
// the embedded kfake cluster for zero-setup runs (Connect), the typed error
// that carries a record's topic, partition and offset, the one function that
// decides what is retryable, and the drain of a consumer group
// (WaitCaughtUp, Drain; lag is read by topics.ReadLag).
//
// There is deliberately no client interface: unit tests run against kfake,
// integration tests against the real broker started by infra/kafka.sh, both
// set up by infra/testenv/kafkatest.
package kafka
