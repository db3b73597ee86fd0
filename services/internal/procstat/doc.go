// Package procstat reads a process's /proc/<pid>/stat, for the actor (its
// browsers' process groups and CPU time) and the drill (the actor's
// browser processes), and the machine's CPU time from /proc/stat, for the
// benchmarks' machine utilization. Off Linux there is no /proc: every
// process reads as gone and the machine as unmeasured.
package procstat
