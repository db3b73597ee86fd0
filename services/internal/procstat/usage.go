package procstat

import (
	"os"
	"strconv"
	"strings"
)

// Fields of Stat (counted from the state) a soak samples.
const (
	NumThreads = 17
	RSSPages   = 21
)

// Usage is what a process and its descendants hold at one moment: the
// soak's samples, whose growth over hours is a leak.
type Usage struct {
	Processes int
	Threads   int
	FDs       int   // open file descriptors (unreadable ones not counted)
	RSS       int64 // resident memory in bytes, summed over the processes
	// Named counts the processes whose command name (/proc/<pid>/comm)
	// starts with the prefix TreeUsage was given (e.g. Chromium's).
	Named int
}

// TreeUsage samples process pid and every descendant it has now; named is
// the command-name prefix Usage.Named counts ("" counts none). The zero
// Usage when pid is gone.
func TreeUsage(pid int, named string) Usage {
	var u Usage
	page := int64(os.Getpagesize())
	for _, p := range Descendants(pid) {
		f := Stat(p)
		if f == nil {
			continue // exited between the listing and now
		}
		u.Processes++
		u.Threads += Int(f, NumThreads)
		u.RSS += int64(Int(f, RSSPages)) * page
		if ents, err := os.ReadDir("/proc/" + strconv.Itoa(p) + "/fd"); err == nil {
			u.FDs += len(ents)
		}
		if named != "" {
			if b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm"); err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), named) {
				u.Named++
			}
		}
	}
	return u
}

// Descendants returns pid and every process whose chain of parents leads
// to it, now; nil when pid is gone.
func Descendants(pid int) []int {
	parent := map[int]int{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := Stat(p); f != nil {
			parent[p] = Int(f, PPID)
		}
	}
	if _, ok := parent[pid]; !ok {
		return nil
	}
	var out []int
	for p := range parent {
		q := p
		for seen := 0; q > 1 && seen < 64; seen++ { // depth bound: a cycle is a race
			if q == pid {
				out = append(out, p)
				break
			}
			q = parent[q]
		}
	}
	return out
}
