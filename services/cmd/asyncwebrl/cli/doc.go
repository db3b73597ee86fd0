// Package cli is the asyncwebrl binary: it parses the command line into a
// config.Config, dispatches subcommands (topics, webenv, query, audit,
// health, policy and version here; the tools bench, drill and replay in
// packages of their own, which never import cli) and, for the default
// command, builds the admin server, the Kafka clients and one Service per
// target, starts them in order and stops them in reverse on SIGINT/SIGTERM
// under the stop deadline. main only calls Main.
//
// Every failure ends as one line on stderr, "asyncwebrl: <what went wrong>",
// and a non-zero exit: 2 for bad usage or config, 1 for runtime failures.
package cli
