package learner

import (
	"fmt"
	"runtime"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	// glibc malloc given back to the OS: doc.go there.
	_ "github.com/asyncwebrl/asyncwebrl/services/internal/cmalloc"
)

// onTorchThread runs fn on a new goroutine locked to its own OS thread and
// returns fn's error. Since gotch v0.8 grad mode is per OS thread (libtorch's
// thread-local GradMode), and gotch reads a C++ error from a thread-local
// slot after each call, so a migrating goroutine could train with the wrong
// grad mode or miss an error. The thread is never unlocked: it exits with the
// goroutine and takes its thread-local torch state along. fn should watch its
// own context; a panic in fn (gotch's Must* helpers) comes back as an error,
// but gotch's log.Fatal calls still end the process, so prefer the
// error-returning variants.
func onTorchThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer func() {
			if r := recover(); r != nil {
				errc <- fmt.Errorf("unable to run torch code: panic: %v", r)
			}
		}()
		errc <- fn()
	}()
	return <-errc
}

// float32Tensor returns a CPU float32 tensor of the given shape holding data,
// rejecting a shape that does not match len(data) before libtorch sees it.
func float32Tensor(data []float32, shape ...int64) (*ts.Tensor, error) {
	return tensorOf(data, gotch.Float, shape...)
}

// int64Tensor returns a CPU int64 tensor of the given shape holding data.
func int64Tensor(data []int64, shape ...int64) (*ts.Tensor, error) {
	return tensorOf(data, gotch.Int64, shape...)
}

func tensorOf[T float32 | int64](data []T, dtype gotch.DType, shape ...int64) (*ts.Tensor, error) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("unable to build tensor: negative dimension in shape %v", shape)
		}
		n *= d
	}
	if n != int64(len(data)) {
		return nil, fmt.Errorf("unable to build tensor: shape %v holds %d values, got %d", shape, n, len(data))
	}
	if len(data) == 0 {
		return ts.Zeros(shape, dtype, gotch.CPU)
	}
	flat, err := ts.OfSlice(data)
	if err != nil {
		return nil, fmt.Errorf("unable to build tensor: %w", err)
	}
	t, err := flat.View(shape, true)
	if err != nil {
		return nil, fmt.Errorf("unable to reshape tensor to %v: %w", shape, err)
	}
	return t, nil
}

// float64Values copies a tensor's values, in row-major order, out of the
// autograd graph into Go memory.
func float64Values(t *ts.Tensor) ([]float64, error) {
	d, err := t.Detach(false)
	if err != nil {
		return nil, fmt.Errorf("unable to detach tensor: %w", err)
	}
	dbl, err := d.Totype(gotch.Double, true)
	if err != nil {
		return nil, fmt.Errorf("unable to convert tensor to float64: %w", err)
	}
	defer dbl.Drop()
	n := dbl.Numel()
	out := make([]float64, n)
	if n == 0 {
		return out, nil
	}
	if err := dbl.CopyData(out, n); err != nil {
		return nil, fmt.Errorf("unable to copy tensor values: %w", err)
	}
	return out, nil
}
