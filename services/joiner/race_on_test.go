//go:build race

package joiner

// raceEnabled trims the long property tests under the race detector, where
// they run tens of times slower and cover no concurrent code.
const raceEnabled = true
