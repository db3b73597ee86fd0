package procstat

import (
	"os"
	"strconv"
	"time"
)

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
	parent := map[int]int{}
	ticks := map[int]int{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f := Stat(p)
		if f == nil {
			continue
		}
		parent[p] = Int(f, PPID)
		ticks[p] = Int(f, UTime) + Int(f, STime) + Int(f, CUTime) + Int(f, CSTime)
	}
	if _, ok := ticks[pid]; !ok {
		return 0
	}
	in := func(p int) bool {
		for seen := 0; p > 1 && seen < 64; seen++ { // depth bound: a cycle is a race
			if p == pid {
				return true
			}
			p = parent[p]
		}
		return false
	}
	var n int
	for p, t := range ticks {
		if in(p) {
			n += t
		}
	}
	return time.Duration(n) * time.Second / ClockTick
}
