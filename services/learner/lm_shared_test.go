package learner

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
)

// TestLMSharedPrefix: a scoring pass that runs the trainable blocks over
// the shared system prefix once (sharedPrefix) gives every sample's answer
// log-prob, the gradient of their sum on every trainable weight, and the
// reference model's log-probs that the pass without sharing gives, to
// 1e-5; it runs the prefix once a pass under the policy's weights (once
// more when a sample brings another prefix) and once for all passes under
// the reference's; a sample without the prefix takes the whole-sequence path
// in the same pass.
func TestLMSharedPrefix(t *testing.T) {
	shape := gguf.Llama{Blocks: 3, Width: 32, FeedForward: 48, Heads: 4, KVHeads: 2, RopeDims: 8, Context: 64,
		Vocab: 50, RopeBase: 10000, NormEps: 1e-5}
	m, ref := llama.Random(shape, 21), llama.Random(shape, 22)
	sys, other := []int32{1, 2, 3, 4, 5, 6}, []int32{1, 2, 3, 9}
	sample := func(system []int32, user, answer []int32) *lmSample {
		allowed := make([][]int32, len(answer))
		for i, id := range answer {
			allowed[i] = []int32{id, (id + 7) % 50, (id + 13) % 50}
		}
		prompt := append(append([]int32(nil), system...), user...)
		return &lmSample{prompt: prompt, system: len(system), answer: answer, allowed: allowed}
	}
	batch := []*lmSample{
		sample(sys, []int32{10, 11, 12}, []int32{30, 31}),
		sample(sys, []int32{13, 14, 15, 16, 17}, []int32{32, 33, 34}),
		sample(nil, []int32{18, 19, 20}, []int32{35}),             // no prefix: the whole sequence
		sample(other, []int32{21, 22}, []int32{36, 37}),           // another prefix, computed again
		sample(sys, []int32{23, 24, 25, 26}, []int32{38, 39, 40}), // back to the first
	}
	type result struct {
		logp, refLogp []float64
		grads         map[string][]float64
		runs          int
	}
	score := func(share bool) result {
		var r result
		err := onTorchThread(func() error {
			tw, err := newLMTwin(m, 2)
			if err != nil {
				return err
			}
			defer tw.close()
			tw.noShare = !share
			if err := tw.setReference(ref); err != nil {
				return err
			}
			lp, _, err := lmScore(context.Background(), tw, batch, tw.logits)
			if err != nil {
				return err
			}
			if r.logp, err = float64Values(lp); err != nil {
				return err
			}
			sc := &scope{}
			defer func() { _ = sc.finish() }()
			sc.tmp = append(sc.tmp, lp)
			loss := sc.sumAll(lp)
			if sc.err != nil {
				return sc.err
			}
			if err := loss.Backward(); err != nil {
				return err
			}
			r.grads = map[string][]float64{}
			for name, p := range tw.p {
				if !tw.trainable(name) {
					continue
				}
				g, err := p.Grad(false)
				if err != nil {
					return err
				}
				if r.grads[name], err = float64Values(g); err != nil {
					return err
				}
				_ = g.Drop()
			}
			for range 2 { // the second pass takes the reference's shared keys and values as they are
				rl, _, err := lmScore(context.Background(), tw, batch, tw.refLogits)
				if err != nil {
					return err
				}
				if r.refLogp, err = float64Values(rl); err != nil {
					return err
				}
				_ = rl.Drop()
			}
			r.runs = tw.sharedRuns
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	whole, shared := score(false), score(true)
	// The policy's pass: sys, other, sys again (each change of prefix is
	// a new one). The reference's first pass: the same three. Its second
	// starts on the sys it ended on, so only other and sys again.
	if whole.runs != 0 || shared.runs != 3+3+2 {
		t.Errorf("shared prefix passes: %d without sharing (want 0), %d with (want 8)", whole.runs, shared.runs)
	}
	near := func(what string, got, want []float64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
		}
		worst := 0.0
		for i := range got {
			d := math.Abs(got[i] - want[i])
			worst = max(worst, d)
			if d > 1e-5*max(1, math.Abs(want[i])) {
				t.Fatalf("%s[%d]: shared %.7g, whole %.7g", what, i, got[i], want[i])
			}
		}
		t.Logf("%s: largest difference %.2g", what, worst)
	}
	near("log-probs", shared.logp, whole.logp)
	near("reference log-probs", shared.refLogp, whole.refLogp)
	if len(shared.grads) == 0 || len(shared.grads) != len(whole.grads) {
		t.Fatalf("gradients of %d weights shared, %d whole", len(shared.grads), len(whole.grads))
	}
	moved := 0
	for name, g := range whole.grads {
		near("gradient "+name, shared.grads[name], g)
		for _, v := range g {
			if v != 0 && strings.HasPrefix(name, "blk1.") {
				moved++
				break
			}
		}
	}
	if moved == 0 {
		t.Errorf("no gradient reached the lower trainable block (blk1): the test would not see a prefix's gradient missing")
	}
}
