// Package evalrun evaluates one model on held-out tasks off the training
// clock: a webenv server and an actor of its own on throwaway topics, the
// same seeds for every model, the rewards read back. replay eval and
// replay train compare models with it; bench train judges each run's
// checkpoints with it, so that both modes are judged by the same episodes,
// not by their own rollout's.
package evalrun
