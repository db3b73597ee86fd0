// Package learner is the gotch (libtorch) learner target: it consumes
// transitions, trains the policy and republishes weights, and it runs the
// curriculum that publishes tasks.
//
//   - service.go, consume.go, loop.go: the Service (one consumer-group member
//     on transitions feeding a replay buffer, one training goroutine,
//     publishing and checkpointing every -publish-every updates); dead
//     letters for undecodable records; held-out transitions (heldout.go)
//     are never trained on.
//   - episodes.go: the return assembly. Transitions wait for their episode
//     to end (discounted returns-to-go for PPO and REINFORCE) and, for GRPO,
//     for their whole group (group-normalised advantages); specified by the
//     golden files in testdata/assembly.
//   - replay.go: the task-balanced replay buffer (FIFO or prioritized).
//   - train.go, model.go, model_logprob.go: the objectives (PPO, REINFORCE
//     with the value baseline, GRPO, behaviour cloning of demonstrations)
//     and the policy's torch twin, the same named tensors as
//     services/policy's ONNX graph (parity tested).
//   - checkpoint.go: the ONNX checkpoint and counters, so a restart never
//     repeats or skips a weights version.
//   - lease.go, publisher.go: one leader per policy. Learners of a policy
//     join its lease group on the one-partition lease topic; the holder of
//     partition 0 trains and publishes, the others stand by and take over
//     when it goes. Versions are published in transactions under one
//     transactional id per policy: a new leader's producer fences the old
//     one, whose publish then fails (errFenced) and stops it.
//   - offline.go: TrainOffline, `replay train` over a transitions topic.
//   - curriculum.go, curriculum_tasks.go: the task scheduler (tiers,
//     promotion, held-out evaluation, demonstrations, MiniWoB++ tasks).
//
// Every torch call runs on one locked OS thread (see onTorchThread): libtorch
// keeps grad mode and gotch's last-error slot thread-local, so a goroutine
// that migrates between OS threads would lose them mid-step. gotch is built
// from the copy infra/gotch/patch.sh makes in .run/gotch for Debian's CPU
// libtorch-dev 1.13.1; about a hundred of its wrappers are stubbed there and
// return an error (infra/gotch/stubs-v0.9.1.txt), among them
// ScaledDotProductAttention, SqueezeDims and the *_correction variance ops:
// compose those from primitives.
package learner
