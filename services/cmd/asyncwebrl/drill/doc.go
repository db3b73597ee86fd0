// Package drill is `asyncwebrl drill`: a fault drill with a verdict. It
// runs the pipeline's members as processes of this binary on a Kafka
// cluster of its own (infra/launch), under synthetic load or real actors,
// kills them with SIGKILL by a schedule and restarts them, then counts
// what every topic and ClickHouse table holds against what was sent
// (lost, duplicated, cut) and how long each fault took to recover.
// `drill matrix` runs several schedules, each repeated.
package drill
