// Package bench is `asyncwebrl bench`: the benchmarks, each against its
// baseline on the same machine and broker. joiner (the exactly-once joiner
// against a consume-only consumer and the write floor), recorder (the
// recorder against bare clickhouse-go inserts), rollout (actor steps/s,
// async against the lock-step sync baselines and the raw loop), train
// (time to skill, asynchronous against synchronous RL, the whole pipeline
// in this process, built by the assembly's constructors that package cli
// passes in as a Pipeline) and report (each of them with short settings,
// in one document with plots).
package bench
