// Package cmdkit is what the asyncwebrl binary's commands share with the
// assembly (package cli) and with each other (bench, drill, replaycmd):
// the usage error that exits 2, the help check, a subcommand's own flags
// taken out of the binary's, the config parse, the logger, the topic
// catalog under a prefix and its apply, the ClickHouse settings, a random
// id, the runner's stop under a deadline, and the joiner's environment
// knobs. It imports no command, so every command can import it.
package cmdkit
