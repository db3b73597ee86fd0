package learner

import (
	"context"
	"math"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
)

// TestLMKLPenalty: the penalty on the divergence from the base model holds
// the policy near it. At the start the policy is its reference, so the
// divergence is 0; after the same five updates, the answers' log-probs
// have moved less far from the reference's with the penalty than without.
// The reference log-prob is taken once per sample: its pass over the
// cached frozen output shows as a cache hit in the first update only.
func TestLMKLPenalty(t *testing.T) {
	shape, answerOn := okCancelChat(t)
	moved, away := map[float64]float64{}, map[float64]float64{}
	for _, kl := range []float64{0, 0.5, 5} {
		good, err := answerOn(`click("b1")`)
		if err != nil {
			t.Fatal(err)
		}
		bad, err := answerOn(`click("b2")`)
		if err != nil {
			t.Fatal(err)
		}
		hp := DefaultHyper()
		// The plain ratio against the log-prob scored before each update
		// starts every update at 1: no clip zeroes the policy term, and
		// what differs between the weights is the penalty alone.
		hp.Algo, hp.LR = GRPOPlain, 3e-3
		err = onTorchThread(func() error {
			m := llama.Random(shape, 13)
			tr, err := newLMTrainer(m, 1, hp, DefaultFrozenCacheBytes, m, kl)
			if err != nil {
				return err
			}
			defer tr.close()
			score := func() (g, b float64) {
				lp, err := lmLogProbs(context.Background(), tr.tw, []*lmSample{good, bad})
				if err != nil {
					t.Fatal(err)
				}
				v, err := float64Values(lp)
				if err != nil {
					t.Fatal(err)
				}
				_ = lp.Drop()
				return v[0], v[1]
			}
			g0, b0 := score()
			var last stepStats
			for i := range 5 {
				g, b := score()
				good.logpOld, good.adv = g, 1
				bad.logpOld, bad.adv = b, -1
				st, err := tr.step(context.Background(), []*lmSample{good, bad})
				if err != nil {
					return err
				}
				hits := int64(2)
				if kl > 0 && i == 0 {
					hits = 4 // and the reference's pass
				}
				if st.FrozenHits != hits || st.FrozenMisses != 0 {
					t.Errorf("kl %g, update %d: %d frozen-cache hits, %d misses; want %d, 0", kl, i+1, st.FrozenHits, st.FrozenMisses, hits)
				}
				if i == 0 && math.Abs(st.RefKL) > 1e-6 {
					t.Errorf("kl %g: the first update's divergence from the reference is %g, want 0 (the policy is the reference)", kl, st.RefKL)
				}
				if !(st.Entropy > 0) {
					t.Errorf("kl %g, update %d: answer entropy %g, want > 0", kl, i+1, st.Entropy)
				}
				last = st
			}
			g1, b1 := score()
			moved[kl], away[kl] = g1-g0, math.Abs(g1-g0)+math.Abs(b1-b0)
			t.Logf("kl %g: the good answer's log-prob moved %+.3f, the bad one's %+.3f; last update's divergence %.4f, entropy %.3f nats", kl, g1-g0, b1-b0, last.RefKL, last.Entropy)
			switch {
			case kl == 0 && last.RefKL != 0:
				t.Errorf("without the penalty the divergence reported is %g, want 0", last.RefKL)
			case kl > 0 && !(last.RefKL > 0):
				t.Errorf("kl %g: after 4 updates the divergence is %g, want > 0", kl, last.RefKL)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Without the penalty the updates must raise the rewarded answer (or
	// the comparison below is of nothing). With it, how far the rewarded
	// answer moves depends on the toy model's start: a heavy penalty can
	// hold it where it was, which is what it is for.
	if !(moved[0] > 0) {
		t.Errorf("without the penalty the rewarded answer's log-prob moved %+.3f, want up", moved[0])
	}
	if !(away[0.5] < away[0] && away[5] < away[0]) {
		t.Errorf("the answers' log-probs moved %.3f, %.3f, %.3f from the reference's in all under kl 0, 0.5, 5: want less with the penalty", away[0], away[0.5], away[5])
	}
}

// TestLMScoreEntropy: lmScore's entropy is the constrained softmax's,
// summed over the answer's tokens, as computed here from the twin's
// logits and the sample's allowed tokens.
func TestLMScoreEntropy(t *testing.T) {
	shape, answerOn := okCancelChat(t)
	smp, err := answerOn(`click("b2")`)
	if err != nil {
		t.Fatal(err)
	}
	err = onTorchThread(func() error {
		tw, err := newLMTwin(llama.Random(shape, 5), 1)
		if err != nil {
			return err
		}
		defer tw.close()
		lp, ent, err := lmScore(context.Background(), tw, []*lmSample{smp}, tw.logits)
		if err != nil {
			return err
		}
		_ = lp.Drop()
		seq := append(append([]int32(nil), smp.prompt...), smp.answer[:len(smp.answer)-1]...)
		rows, err := tw.logits(seq, len(smp.prompt)-1, nil)
		if err != nil {
			return err
		}
		vals, err := float64Values(rows)
		_ = rows.Drop()
		if err != nil {
			return err
		}
		V := shape.Vocab
		var want float64
		for i, allowed := range smp.allowed {
			row := vals[i*V : (i+1)*V]
			hi := math.Inf(-1)
			for _, id := range allowed {
				hi = max(hi, row[id])
			}
			var z float64
			for _, id := range allowed {
				z += math.Exp(row[id] - hi)
			}
			for _, id := range allowed {
				p := math.Exp(row[id]-hi) / z
				want -= p * math.Log(p)
			}
		}
		if math.Abs(ent[0]-want) > 1e-4*max(1, want) {
			t.Errorf("entropy %g, want %g (%d answer tokens)", ent[0], want, len(smp.allowed))
		}
		if !(want > 0) {
			t.Errorf("the hand-computed entropy is %g: the test's sample allows one token everywhere", want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
