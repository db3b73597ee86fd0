// Package replaycmd is `asyncwebrl replay`: join (services/replay's Join
// over a bounded history, from Kafka or the ClickHouse archive, into a new
// transitions topic), train (a fresh policy from a transitions topic with
// no actors running, compared with the live one) and eval (a policy's
// newest version on held-out episodes). The evaluation is package
// evalrun's (bench train judges its checkpoints with it too): a webenv
// server and an actor serving the model on throwaway topics, the tasks
// published and the done rewards read back.
package replaycmd
