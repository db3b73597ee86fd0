// Package kafka builds the franz-go clients every component uses from the
// one Config: seed brokers, SASL (PLAIN or SCRAM) and TLS, a slog adapter,
// the embedded kfake cluster for zero-setup runs, the typed error that carries
// a record's topic, partition and offset, and the one function that decides
// what is retryable.
//
// There is deliberately no client interface: unit tests run against kfake,
// integration tests against the real broker started by infra/kafka.sh.
package kafka
