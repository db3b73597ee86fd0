//go:build !race

package joiner

const raceEnabled = false
