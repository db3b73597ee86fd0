package learner

import (
	"context"
	"fmt"
	"math"

	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"

	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
)

// lmTrainer trains a language model's twin: GRPO's clipped surrogate on the
// answers' log-probs (each step's group-relative advantage, the ratio to
// the behaviour log-prob the actor recorded), and behaviour cloning on
// demonstrations. Only the twin's top blocks learn. All methods run on the
// torch thread.
type lmTrainer struct {
	tw     *lmTwin
	opt    *nn.Optimizer
	hp     Hyper
	params []*ts.Tensor // the trainable weights
}

// newLMTrainer trains m's top train blocks; cacheBytes bounds the twin's
// cache of frozen-block outputs (0: off).
func newLMTrainer(m *llama.Model, train int, hp Hyper, cacheBytes int64) (*lmTrainer, error) {
	tw, err := newLMTwin(m, train)
	if err != nil {
		return nil, err
	}
	if cacheBytes > 0 {
		tw.cache = newFrozenCache(cacheBytes)
	}
	opt, err := nn.DefaultAdamConfig().Build(tw.vs, hp.LR)
	if err != nil {
		tw.close()
		return nil, fmt.Errorf("unable to build the optimiser: %w", err)
	}
	t := &lmTrainer{tw: tw, opt: opt, hp: hp}
	for _, w := range m.Tensors() {
		if tw.trainable(w.Name) {
			t.params = append(t.params, tw.p[w.Name])
		}
	}
	return t, nil
}

func (t *lmTrainer) close() { t.tw.close() }

// step is one update on batch; ctx ends it between samples.
func (t *lmTrainer) step(ctx context.Context, batch []*lmSample) (st stepStats, err error) {
	B := len(batch)
	if B == 0 {
		return st, fmt.Errorf("unable to train on an empty batch")
	}
	if c := t.tw.cache; c != nil {
		h, m := c.hits, c.misses
		defer func() { st.FrozenHits, st.FrozenMisses = c.hits-h, c.misses-m }()
	}
	tw := t.tw
	l, lf, c := tw.loaded, tw.loadFailed, tw.computed
	defer func() {
		st.FrozenLoaded, st.FrozenLoadFailed, st.FrozenComputed = tw.loaded-l, tw.loadFailed-lf, tw.computed-c
	}()
	logp, err := lmLogProbs(ctx, t.tw, batch)
	if err != nil {
		return st, err
	}
	s := &scope{}
	s.tmp = append(s.tmp, logp)
	defer func() { _ = s.finish() }()
	advF, oldF, polF, demoF := make([]float32, B), make([]float32, B), make([]float32, B), make([]float32, B)
	for i, x := range batch {
		advF[i], oldF[i] = float32(x.adv), float32(x.logpOld)
		if x.demo {
			demoF[i] = 1
			st.Demo++
		} else {
			polF[i] = 1
			st.Policy++
		}
	}
	Bn := int64(B)
	advT := s.keep(float32Tensor(advF, Bn))
	oldT := s.keep(float32Tensor(oldF, Bn))
	polT := s.keep(float32Tensor(polF, Bn))
	demoT := s.keep(float32Tensor(demoF, Bn))
	anchor := oldT
	var behav *ts.Tensor
	st.BehaviourWeight = 1
	if t.hp.Algo.Decoupled() {
		if anchor, behav, err = t.decouple(s, logp, batch, &st); err != nil {
			return st, err
		}
	}
	ratio := s.exp(s.sub(logp, anchor))
	clipped := s.clamp(ratio, 1-t.hp.ClipEps, 1+t.hp.ClipEps)
	pgPer := s.neg(s.minimum(s.mul(ratio, advT), s.mul(clipped, advT)))
	if behav != nil {
		pgPer = s.mul(pgPer, behav)
	}
	nPol, nDemo := float64(max(st.Policy, 1)), float64(max(st.Demo, 1))
	pgLoss := s.mulScalar(s.sumAll(s.mul(pgPer, polT)), 1/nPol)
	bcLoss := s.mulScalar(s.sumAll(s.mul(s.neg(logp), demoT)), 1/nDemo)
	total := s.add(pgLoss, s.mulScalar(bcLoss, t.hp.BCCoef))
	if s.err != nil {
		return st, fmt.Errorf("unable to compute the loss: %w", s.err)
	}
	if r, err := s.values(ratio); err == nil {
		var kl float64
		for i, x := range batch {
			if x.demo {
				continue
			}
			if math.Abs(r[i]-1) > t.hp.ClipEps {
				st.ClipFrac++
			}
			kl += -math.Log(math.Max(r[i], 1e-12))
		}
		if st.Policy > 0 {
			st.ClipFrac /= float64(st.Policy)
			st.ApproxKL = kl / float64(st.Policy)
		}
	}
	for _, x := range []struct {
		t   *ts.Tensor
		dst *float64
	}{{total, &st.Loss}, {pgLoss, &st.PolicyLoss}, {bcLoss, &st.BCLoss}} {
		vals, err := float64Values(x.t)
		if err != nil {
			return st, err
		}
		*x.dst = vals[0]
	}
	if math.IsNaN(st.Loss) || math.IsInf(st.Loss, 0) {
		return st, fmt.Errorf("unable to train: the loss is %v", st.Loss)
	}
	if err := clippedStep(t.opt, t.params, total, t.hp.MaxGradNorm); err != nil {
		return st, fmt.Errorf("unable to take an optimiser step: %w", err)
	}
	return st, nil
}

// decouple is GRPO's decoupled ratio on the language model, as the
// features trainer's (trainer.decouple): the clip is anchored on the
// proximal log-prob, the answer's under the parameters at the sample's
// first use (set then), and the behaviour log-prob only weighs the sample
// by π_prox/π_behav, 0 above BehaviourCap. Why here too: the lm learner
// trains on samples many versions old (12-06: it drew 8 of the hundreds
// its 3 executors made a minute), and against their behaviour log-prob
// GRPO's plain ratio clipped 37–75% of them, which then taught nothing.
// Demonstrations get weight 0 (their policy term is masked anyway).
func (t *lmTrainer) decouple(s *scope, logp *ts.Tensor, batch []*lmSample, st *stepStats) (anchor, behav *ts.Tensor, err error) {
	old := make([]float32, len(batch))
	var polIdx []int
	for i, x := range batch {
		old[i] = float32(x.logpOld)
		if !x.demo {
			polIdx = append(polIdx, i)
		}
	}
	return decoupled(s, logp, old, polIdx, func(i int) (*proximal, float64) { return &batch[i].prox, batch[i].logpOld }, st)
}

// trained copies the trainable weights out, by name: what a published
// version of a language model carries.
func (t *lmTrainer) trained(m *llama.Model) ([]llama.Tensor, error) {
	var out []llama.Tensor
	for _, w := range m.Tensors() {
		if !t.tw.trainable(w.Name) {
			continue
		}
		vals, err := float64Values(t.tw.p[w.Name])
		if err != nil {
			return nil, fmt.Errorf("unable to export weight %q: %w", w.Name, err)
		}
		data := make([]float32, len(vals))
		for i, v := range vals {
			data[i] = float32(v)
		}
		out = append(out, llama.Tensor{Name: w.Name, Shape: w.Shape, Data: data})
	}
	return out, nil
}
