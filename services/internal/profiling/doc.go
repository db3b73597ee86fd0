// Package profiling pushes continuous profiles to a Pyroscope server when one
// is configured (PYROSCOPE_SERVER_ADDRESS). No Pyroscope server is installed
// on development machines; compose.yaml runs one. net/http/pprof is served by
// the admin package whatever this package does.
package profiling
