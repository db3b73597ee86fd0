//go:build linux

package actor

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/procstat"
)

// ownProcessGroup puts Chromium in a process group of its own, so that Close
// can kill the browser and every helper it forked at once, and makes the
// kernel SIGKILL it when the actor dies, even by kill -9 (Pdeathsig; chromedp
// starts the browser from a goroutine locked to its OS thread for the
// browser's life, which Pdeathsig needs). It replaces chromedp's default,
// which sets Pdeathsig only.
func ownProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// killGroup SIGKILLs every process of the group pgid.
func killGroup(pgid int) {
	if pgid > 1 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// processesOf returns the pids of a browser's processes: the members of
// its process group pgid (0: none), and the processes whose command line
// holds --user-data-dir=dir (""; none). Chromium passes the dir to every
// helper process, the headless shell to none, and helpers stay in the
// browser's group, where a forked helper can still be found after its main
// process is gone; the actor's directories are unique (and without spaces:
// os.MkdirTemp).
func processesOf(pgid int, dir string) []int {
	want := []byte("--user-data-dir=" + dir)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if pgid > 1 && processGroup(pid) == pgid {
			pids = append(pids, pid)
			continue
		}
		if dir == "" {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		// Chromium's helpers rewrite their command line into one
		// space-separated string (the process title), so split on both.
		for _, arg := range bytes.FieldsFunc(cmdline, func(r rune) bool { return r == 0 || r == ' ' }) {
			if bytes.Equal(arg, want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// processGroup returns the process group of pid, 0 if unknown (a zombie
// still has one; the kernel reaps it with its parent).
func processGroup(pid int) int {
	f := procstat.Stat(pid)
	if f == nil || f[procstat.State] == "Z" {
		return 0
	}
	return procstat.Int(f, procstat.PGRP)
}

// killRest kills a browser's processes (processesOf) until none is left (a
// helper can fork just as its parent dies), for at most two seconds.
func killRest(pgid int, dir string) {
	deadline := time.Now().Add(2 * time.Second)
	for quiet := 0; quiet < 3 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pids := processesOf(pgid, dir)
		if len(pids) == 0 {
			quiet++
			continue
		}
		quiet = 0
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// cpuTimeOf returns the user+system CPU time the processes have used.
// Processes that exited are not counted.
func cpuTimeOf(pids []int) time.Duration {
	var ticks uint64
	for _, pid := range pids {
		f := procstat.Stat(pid)
		if f == nil {
			continue
		}
		u, err1 := strconv.ParseUint(f[procstat.UTime], 10, 64)
		st, err2 := strconv.ParseUint(f[procstat.STime], 10, 64)
		if err1 == nil && err2 == nil {
			ticks += u + st
		}
	}
	return time.Duration(ticks) * time.Second / procstat.ClockTick
}

// selfCPU returns this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// setGroupNice sets the nice value of every thread of every process in the
// group pgid (best effort; 0 leaves the browser's own priorities alone).
func setGroupNice(pgid, nice int) {
	if pgid > 1 && nice != 0 {
		_ = syscall.Setpriority(syscall.PRIO_PGRP, pgid, nice)
	}
}
