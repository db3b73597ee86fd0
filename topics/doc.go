// Package topics is the topic catalog as code: every topic the system uses,
// with its partitions, replication, retention, cleanup policy and maximum
// message size, and the admin operations built on kadm that create it
// (Apply) and report drift from it (Check), and the one reader of a
// consumer group's lag on them (ReadLag).
//
// Names carry a configurable prefix so that several runs (or several
// integration tests) share one cluster without seeing each other's data.
// Everything that reads or writes a topic takes its name from here.
package topics
