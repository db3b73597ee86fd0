package procstat

import "time"

// The reaped children's times, after STime.
const (
	CUTime = 13
	CSTime = 14
)

// ClockTick is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux platform Go supports.
const ClockTick = 100

// TreeCPU returns the user+system CPU time of process pid and of every
// descendant it has now, with the times of the children they reaped: what a
// component costs with its helpers (an actor with its Chromium processes,
// which run in process groups of their own, so a group is not the tree).
// A helper that exited and was reaped counts in its parent's reaped
// times; one that exited unreaped is lost, as it is to top. 0 when pid is
// gone.
func TreeCPU(pid int) time.Duration {
	var n int
	for _, p := range Descendants(pid) {
		if f := Stat(p); f != nil {
			n += Int(f, UTime) + Int(f, STime) + Int(f, CUTime) + Int(f, CSTime)
		}
	}
	return time.Duration(n) * time.Second / ClockTick
}
