package actor

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// Policy is the executors' seam to what chooses their actions: the ONNX
// network served by the batching inference server (onnxPolicy) today,
// another backend (a language model behind a server) tomorrow, without a
// change to the executor loops. A decision is made in two halves, so that
// the lock-step baseline can prepare every executor's input before one
// batched decision.
type Policy interface {
	// Prepare turns the stable observation into the policy's input (the
	// featurizer's work, outside inference).
	Prepare(obs *eventspb.Observation) (Input, error)
	// Decide chooses the action for in: greedy (the argmax, never one
	// of q.Avoid) or sampled with q.RNG. The action carries the fields of
	// its type, its log-prob, value and raw form; the caller stamps the
	// envelope and the episode's facts.
	Decide(ctx context.Context, in Input, q Query) (Decision, error)
	// Swap installs the weights of version (published by the learner);
	// Version is the version deciding now (0: the initial policy).
	Swap(ctx context.Context, weights []byte, version uint64) error
	Version() uint64
	// Close waits for decisions in flight and releases the backend.
	Close(ctx context.Context) error
}

// Input is a Policy's prepared input for one observation; only the Policy
// that prepared it reads it.
type Input any

// Query is what an executor asks of a decision besides the observation.
type Query struct {
	Greedy bool
	// Avoid: for greedy decisions, actions not to choose again (the one
	// just taken on the same page, those already tried from this state).
	Avoid []*eventspb.Action
	// History is the episode's earlier actions, oldest first.
	History []*eventspb.Action
	// RNG draws sampled decisions (the executor's own).
	RNG *rand.Rand
}

// Decision is a chosen action with the facts of how it was chosen.
type Decision struct {
	Action *eventspb.Action
	// Version of the weights that chose it; BatchSize and InferenceMicros
	// of the inference batch it was part of.
	Version         uint64
	BatchSize       int
	InferenceMicros int64
	// DeadLetter, when set, records what the backend could not use (a
	// model's reply that named no valid action); the executor publishes
	// it to the dlq topic with the action.
	DeadLetter *eventspb.DeadLetter
}

// onnxPolicy is the ONNX network in the batching inference server
// (services/policy): Prepare featurizes, Decide submits to the server's
// dynamic batch and samples (or takes the greedy choice) from its outputs.
type onnxPolicy struct{ srv *policy.Server }

func (p onnxPolicy) Prepare(obs *eventspb.Observation) (Input, error) {
	arch := p.srv.Arch()
	return arch.Featurize(obs)
}

// errForeignInput: an Input another Policy prepared.
var errForeignInput = errors.New("the policy's input was prepared by another policy")

func (p onnxPolicy) Decide(ctx context.Context, in Input, q Query) (Decision, error) {
	f, ok := in.(*policy.Features)
	if !ok {
		return Decision{}, errForeignInput
	}
	out, err := p.srv.Submit(ctx, f)
	if err != nil {
		return Decision{}, &stageError{"inference", err}
	}
	arch := p.srv.Arch()
	var d *policy.Decision
	if q.Greedy {
		d, err = arch.GreedyAvoiding(f, out, q.Avoid)
	} else {
		d, err = arch.Sample(f, out, q.RNG, false)
	}
	if err != nil {
		return Decision{}, &stageError{"sampling", err}
	}
	return Decision{Action: d.Action, Version: out.Version, BatchSize: out.BatchSize, InferenceMicros: out.InferenceMicros}, nil
}

func (p onnxPolicy) Swap(ctx context.Context, weights []byte, version uint64) error {
	return p.srv.Swap(ctx, weights, version)
}

func (p onnxPolicy) Version() uint64                 { return p.srv.Version() }
func (p onnxPolicy) Close(ctx context.Context) error { return p.srv.Close(ctx) }

// stageError names the stage of a decision that failed (inference,
// sampling), which the executor's failure accounting reports.
type stageError struct {
	stage string
	err   error
}

func (e *stageError) Error() string { return e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }
