// Package testenv gives integration tests the real services that infra/
// starts: the Kafka broker and the ClickHouse server, at the addresses
// infra/lib.sh defaults to (overridable by the same environment variables
// the binary reads). It also gives each test its own topic prefix and group,
// so tests never see each other's data.
//
// A TestIntegration* test that cannot reach its service fails with the
// command that starts it; ASYNCWEBRL_SKIP_INTEGRATION=1 skips them instead
// (for `make test-unit`).
package testenv
