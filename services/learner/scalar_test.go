package learner

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/sugarme/gotch/ts"
)

// TestScalarSurvivesCollection runs scalar ops while another goroutine
// forces garbage collections, the condition under which gotch's finalizer
// freed a scalar in the middle of a cgo call (see withScalar). Each result
// is checked, so a freed or reused scalar shows as an error or a wrong value.
// It is a guard, not a reproducer: the unguarded call did not fail here in
// 60,000 ops; the crash it guards against came once in three CI runs.
func TestScalarSurvivesCollection(t *testing.T) {
	const n = 5000
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			runtime.GC()
		}
	}()
	defer func() { stop.Store(true); <-done }()
	err := onTorchThread(func() error {
		x, err := float32Tensor([]float32{1, 0, 1, 0}, 1, 4)
		if err != nil {
			return err
		}
		defer x.Drop()
		for i := range n {
			y, err := withScalar(-1e9, func(sc *ts.Scalar) (*ts.Tensor, error) { return x.AddScalar(sc, false) })
			if err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
			v, err := float32Values(y)
			_ = y.Drop()
			if err != nil {
				return err
			}
			if v[0] != 1-1e9 || v[1] != -1e9 {
				t.Fatalf("op %d: got %v, want [%v %v ...]", i, v, float32(1-1e9), float32(-1e9))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
