// Package procstat reads a process's /proc/<pid>/stat, for the actor (its
// browsers' process groups and CPU time) and the drill (the actor's
// browser processes), and the machine's CPU time from /proc/stat, for the
// benchmarks' machine utilization, and what a process tree holds (its
// processes, threads, memory and open files) for the soak. Off Linux there is no /proc: every
// process reads as gone and the machine as unmeasured.
package procstat
