// Package procstat reads a process's /proc/<pid>/stat, for the actor (its
// browsers' process groups and CPU time) and the drill (the actor's
// browser processes). Off Linux there is no /proc and every process reads
// as gone.
package procstat
