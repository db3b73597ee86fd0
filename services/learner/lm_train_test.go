package learner

import (
	"context"
	"math"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
	"github.com/asyncwebrl/asyncwebrl/services/lm/tokenizer"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// TestLMTrainerLearns: GRPO steps with a positive advantage on one answer
// and a negative one on another raise the first's log-prob and lower the
// second's; only the top block and the output norm change; and the
// exported weights, set into the reference model (an actor's swap), give
// the twin's new log-prob. The frozen blocks' outputs come from the
// twin's cache in every update (lm_frozen.go).
func TestLMTrainerLearns(t *testing.T) {
	shape, answerOn := okCancelChat(t)
	m := llama.Random(shape, 13)
	sampleOf := func(answer string) *lmSample {
		s, err := answerOn(answer)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	good, bad := sampleOf(`click("b1")`), sampleOf(`click("b2")`)
	hp := DefaultHyper()
	hp.LR = 1e-2
	before := map[string][]float32{}
	for _, w := range m.Tensors() {
		before[w.Name] = append([]float32(nil), w.Data...)
	}
	err := onTorchThread(func() error {
		tr, err := newLMTrainer(m, 1, hp, DefaultFrozenCacheBytes, nil, 0)
		if err != nil {
			return err
		}
		defer tr.close()
		score := func() (float64, float64, error) {
			lp, err := lmLogProbs(context.Background(), tr.tw, []*lmSample{good, bad})
			if err != nil {
				return 0, 0, err
			}
			v, err := float64Values(lp)
			return v[0], v[1], err
		}
		g0, b0, err := score()
		if err != nil {
			return err
		}
		for range 5 {
			g, b, err := score()
			if err != nil {
				return err
			}
			good.logpOld, good.adv = g, 1
			bad.logpOld, bad.adv = b, -1
			st, err := tr.step(context.Background(), []*lmSample{good, bad})
			if err != nil {
				return err
			}
			// score() computed both samples' frozen block: the update takes
			// it from the cache, and learns all the same (below).
			if st.FrozenHits != 2 || st.FrozenMisses != 0 {
				t.Errorf("an update of two scored samples: %d frozen-cache hits, %d misses; want 2, 0", st.FrozenHits, st.FrozenMisses)
			}
		}
		g1, b1, err := score()
		if err != nil {
			return err
		}
		t.Logf("log-prob of the good answer %.3f → %.3f, of the bad one %.3f → %.3f", g0, g1, b0, b1)
		if g1 <= g0 || b1 >= b0 {
			t.Errorf("training did not move the answers: good %.3f → %.3f, bad %.3f → %.3f", g0, g1, b0, b1)
		}
		trained, err := tr.trained(m)
		if err != nil {
			return err
		}
		for _, w := range trained {
			if !tr.tw.trainable(w.Name) {
				t.Errorf("exported frozen weight %s", w.Name)
			}
		}
		if len(trained) != 10 { // block 1's nine weights and the output norm
			t.Errorf("%d trained weights exported", len(trained))
		}
		if err := m.SetTensors(trained); err != nil {
			return err
		}
		var ref float64
		cache := m.NewCache()
		logits, err := m.Forward(good.prompt, cache)
		if err != nil {
			return err
		}
		for i := range good.answer {
			if i > 0 {
				if logits, err = m.Forward(good.answer[i-1:i], cache); err != nil {
					return err
				}
			}
			masked := make([]float32, len(logits))
			for j := range masked {
				masked[j] = -1e9
			}
			for _, id := range good.allowed[i] {
				masked[id] = logits[id]
			}
			ref += policy.LogSoftmax(masked)[good.answer[i]]
		}
		if math.Abs(ref-g1) > 1e-3 {
			t.Errorf("swapped reference model: %.5f, twin %.5f", ref, g1)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range m.Tensors() {
		changed := false
		for i := range w.Data {
			changed = changed || w.Data[i] != before[w.Name][i]
		}
		if changed != (w.Name == "output_norm" || len(w.Name) > 5 && w.Name[:5] == "blk1.") {
			t.Errorf("weight %s changed %v", w.Name, changed)
		}
	}
}

// TestLMDecoupledRatio: an answer its actor found e times less likely than
// the learner does now (a stale sample), with a positive advantage. Under
// grpo-plain its ratio against the behaviour log-prob, e, is past the clip
// and the update teaches nothing; under grpo (decoupled) the clip is
// anchored on the proximal log-prob, the ratio starts at 1, the sample is
// weighed by e, and its log-prob rises. A sample e² less likely is past
// BehaviourCap (5): weight 0, nothing learned, counted as capped.
func TestLMDecoupledRatio(t *testing.T) {
	shape, answerOn := okCancelChat(t)
	for _, c := range []struct {
		algo      Algo
		staleness float64 // log π_now − log π_behav
		learns    bool
		capped    float64
	}{
		{GRPOPlain, 1, false, 0},
		{GRPO, 1, true, 0},
		{GRPO, 2, false, 1},
	} {
		hp := DefaultHyper()
		hp.Algo, hp.LR = c.algo, 1e-2
		err := onTorchThread(func() error {
			tr, err := newLMTrainer(llama.Random(shape, 13), 1, hp, DefaultFrozenCacheBytes, nil, 0)
			if err != nil {
				return err
			}
			defer tr.close()
			smp, err := answerOn(`click("b1")`)
			if err != nil {
				return err
			}
			score := func() (float64, error) {
				lp, err := lmLogProbs(context.Background(), tr.tw, []*lmSample{smp})
				if err != nil {
					return 0, err
				}
				v, err := float64Values(lp)
				return v[0], err
			}
			before, err := score()
			if err != nil {
				return err
			}
			smp.adv, smp.logpOld = 1, before-c.staleness
			st, err := tr.step(context.Background(), []*lmSample{smp})
			if err != nil {
				return err
			}
			after, err := score()
			if err != nil {
				return err
			}
			t.Logf("%s, behaviour log-prob %.1f below: log-prob %.4f → %.4f, clipped %.0f%%, behaviour weight %.2f, capped %.0f%%",
				c.algo, c.staleness, before, after, 100*st.ClipFrac, st.BehaviourWeight, 100*st.BehaviourCapped)
			if learned := after > before+1e-4; learned != c.learns {
				t.Errorf("%s, behaviour log-prob %.1f below: learned %v (%.4f → %.4f), want %v", c.algo, c.staleness, learned, before, after, c.learns)
			}
			if st.BehaviourCapped != c.capped {
				t.Errorf("%s, behaviour log-prob %.1f below: capped share %v, want %v", c.algo, c.staleness, st.BehaviourCapped, c.capped)
			}
			if c.algo == GRPO && c.capped == 0 && math.Abs(st.BehaviourWeight-math.E) > 1e-3 {
				t.Errorf("decoupled behaviour weight %.4f, want e", st.BehaviourWeight)
			}
			if c.algo == GRPO && (!smp.prox.set || smp.prox.logp != before) {
				t.Errorf("the proximal log-prob was not set at the first use: %v %.4f, want %.4f", smp.prox.set, smp.prox.logp, before)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// okCancelChat is the trainer tests' tiny language model: a two-block
// shape over a byte tokenizer, and answerOn, which makes an answer's
// sample on a page with an OK (b1) and a Cancel (b2) button.
func okCancelChat(t *testing.T) (gguf.Llama, func(answer string) (*lmSample, error)) {
	t.Helper()
	tok, err := tokenizer.New(tokenizer.ByteVocab("<|im_start|>", "<|im_end|>"))
	if err != nil {
		t.Fatal(err)
	}
	eos, _ := tok.ID("<|im_end|>")
	shape := gguf.Llama{Blocks: 2, Width: 32, FeedForward: 64, Heads: 4, KVHeads: 2, RopeDims: 8, Context: 4096,
		Vocab: tok.Len(), RopeBase: 10000, NormEps: 1e-5}
	obs := &eventspb.Observation{Instruction: "Click OK.", Elements: []*eventspb.Element{{Bid: "b1", Role: "button", Text: "OK"}, {Bid: "b2", Role: "button", Text: "Cancel"}}}
	dec := lm.NewDecoder(tok, eos)
	return shape, func(answer string) (*lmSample, error) {
		a := &eventspb.Action{Envelope: &eventspb.Envelope{EventId: answer}, Lm: &eventspb.LMOutput{TokenIds: tok.Encode(answer, false)}}
		return newLMSample(tok, dec, obs, a, action.SetBid, lm.AnswerAction)
	}
}
