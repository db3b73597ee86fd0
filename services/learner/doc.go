// Package learner will hold the gotch (libtorch) learner target: it consumes
// transitions, trains the policy and republishes weights.
//
// For now it holds the torch helpers that target will build on, and the test
// that proves the gotch build this repo patches (infra/gotch/patch.sh: Debian's
// CPU libtorch-dev 1.13.1) actually trains.
//
// Every torch call runs on one locked OS thread (see onTorchThread): libtorch
// keeps grad mode and gotch's last-error slot thread-local, so a goroutine
// that migrates between OS threads would lose them mid-step. About a hundred
// of gotch's wrappers are stubbed on this libtorch and return an error
// (infra/gotch/stubs-v0.9.1.txt), among them ScaledDotProductAttention,
// SqueezeDims and the *_correction variance ops: compose those from
// primitives.
package learner
