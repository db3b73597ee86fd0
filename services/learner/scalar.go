package learner

import (
	"runtime"

	"github.com/sugarme/gotch/ts"
)

// withScalar runs op with a float64 torch scalar and keeps the scalar alive
// until op returns.
//
// Why: gotch frees a Scalar's C memory in a Go finalizer, and its generated
// ops read the C pointer out of the Scalar before the cgo call. Once that
// load is done the Go value is unreachable, so a collection during the call
// may free the scalar libtorch is still reading. The learner then dies with
// "AddScalar() failed: s.isIntegral(false) INTERNAL ASSERT FAILED"
// (ScalarOps.h), as a clean-clone TestIntegrationDrill did once in three
// runs (2026-12-05). Every scalar the learner passes to torch goes through
// here.
func withScalar(v float64, op func(*ts.Scalar) (*ts.Tensor, error)) (*ts.Tensor, error) {
	sc := ts.FloatScalar(v)
	out, err := op(sc)
	runtime.KeepAlive(sc)
	return out, err
}

// withScalars is withScalar for an op that takes two scalars.
func withScalars(a, b float64, op func(a, b *ts.Scalar) (*ts.Tensor, error)) (*ts.Tensor, error) {
	sa, sb := ts.FloatScalar(a), ts.FloatScalar(b)
	out, err := op(sa, sb)
	runtime.KeepAlive(sa)
	runtime.KeepAlive(sb)
	return out, err
}
