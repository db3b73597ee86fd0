package learner

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"
)

// TestTorchTrainsLinearRegression is the smoke test of the patched gotch
// build: a linear layer must learn y = x·w + b with Adam on CPU. It fails if
// the cgo flags link the wrong libtorch ABI, if autograd or the optimizer do
// not work, or if grad mode is lost between steps.
func TestTorchTrainsLinearRegression(t *testing.T) {
	trueW := []float64{2, -3, 0.5}
	const trueB = 1.0
	const n = 256
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float32, 0, n*len(trueW))
	ys := make([]float32, 0, n)
	for range n {
		y := trueB
		for _, w := range trueW {
			x := rng.Float64()*2 - 1
			xs = append(xs, float32(x))
			y += w * x
		}
		ys = append(ys, float32(y))
	}

	var initial, final float64
	var weights, bias []float64
	err := onTorchThread(func() error {
		x, err := float32Tensor(xs, n, int64(len(trueW)))
		if err != nil {
			return err
		}
		y, err := float32Tensor(ys, n, 1)
		if err != nil {
			return err
		}
		vs := nn.NewVarStore(gotch.CPU)
		defer vs.Destroy()
		lin := nn.NewLinear(vs.Root(), int64(len(trueW)), 1, nn.DefaultLinearConfig())
		opt, err := nn.DefaultAdamConfig().Build(vs, 0.05)
		if err != nil {
			return err
		}
		for step := range 500 {
			loss, err := lin.Forward(x).MseLoss(y, 1, true) // 1: mean reduction
			if err != nil {
				return err
			}
			v, err := float64Values(loss)
			if err != nil {
				return err
			}
			if step == 0 {
				initial = v[0]
			}
			final = v[0]
			if err := opt.BackwardStep(loss); err != nil {
				return err
			}
			if err := loss.Drop(); err != nil {
				return err
			}
		}
		if weights, err = float64Values(lin.Ws); err != nil {
			return err
		}
		bias, err = float64Values(lin.Bs)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loss %.6f -> %.6f, weights %.4f, bias %.4f", initial, final, weights, bias)
	if !(final < 0.01*initial) {
		t.Errorf("final loss %g is not below 1%% of the initial %g", final, initial)
	}
	if len(weights) != len(trueW) || len(bias) != 1 {
		t.Fatalf("got %d weights and %d biases, want %d and 1", len(weights), len(bias), len(trueW))
	}
	for i, w := range trueW {
		if math.Abs(weights[i]-w) > 0.05 {
			t.Errorf("weight %d = %.4f, want %.4f ± 0.05", i, weights[i], w)
		}
	}
	if math.Abs(bias[0]-trueB) > 0.05 {
		t.Errorf("bias = %.4f, want %.4f ± 0.05", bias[0], trueB)
	}
}

// TestTorchStubbedWrapperReturnsError checks the other half of the patch: a
// wrapper stubbed for libtorch 1.13.1 (atg_squeeze_dims) must come back as a
// Go error naming it, not crash or silently succeed.
func TestTorchStubbedWrapperReturnsError(t *testing.T) {
	err := onTorchThread(func() error {
		x, err := ts.Zeros([]int64{2, 1}, gotch.Float, gotch.CPU)
		if err != nil {
			return err
		}
		_, err = x.SqueezeDims([]int64{1}, false)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "atg_squeeze_dims: not available in libtorch") {
		t.Fatalf("want the stub's error, got %v", err)
	}
}

func TestFloat32TensorRejectsShapeMismatch(t *testing.T) {
	err := onTorchThread(func() error {
		_, err := float32Tensor([]float32{1, 2, 3}, 2, 2)
		return err
	})
	if err == nil {
		t.Fatal("want an error for 3 values in a 2x2 shape")
	}
}

func TestFloat32TensorRoundTrips(t *testing.T) {
	var got []float64
	err := onTorchThread(func() error {
		x, err := float32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
		if err != nil {
			return err
		}
		size, err := x.Size()
		if err != nil {
			return err
		}
		if len(size) != 2 || size[0] != 2 || size[1] != 3 {
			t.Errorf("size = %v, want [2 3]", size)
		}
		got, err = float64Values(x)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 2, 3, 4, 5, 6}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("values = %v, want %v", got, want)
		}
	}
}

func TestOnTorchThreadTurnsPanicIntoError(t *testing.T) {
	err := onTorchThread(func() error { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("want an error carrying the panic, got %v", err)
	}
}
