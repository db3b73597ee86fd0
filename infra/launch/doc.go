// Package launch starts the real components a program needs on loopback,
// with the same scripts the README, CI and the tests use: a Kafka cluster
// of its own (infra/kafka.sh on free ports), a ClickHouse server of its own
// (infra/clickhouse.sh) and processes of the binary with their logs. The
// drill runs on it; infra/testenv wraps it for tests (a testing.TB, a
// cleanup), so the binary never links package testing.
package launch
