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
	// kl weighs the penalty on the policy samples' divergence from the
	// reference model (the twin's refP); 0: none.
	kl float64
}

// newLMTrainer trains m's top train blocks; cacheBytes bounds the twin's
// cache of frozen-block outputs (0: off). With kl > 0 the loss adds
// kl times the answers' divergence from ref (the base model: m is the
// newest version after a restart), ½(logp−ref)² a policy sample.
func newLMTrainer(m *llama.Model, train int, hp Hyper, cacheBytes int64, ref *llama.Model, kl float64) (*lmTrainer, error) {
	tw, err := newLMTwin(m, train)
	if err != nil {
		return nil, err
	}
	if kl > 0 {
		if ref == nil {
			ref = m
		}
		if err := tw.setReference(ref); err != nil {
			tw.close()
			return nil, err
		}
	}
	if cacheBytes > 0 {
		tw.cache = newFrozenCache(cacheBytes)
	}
	opt, err := nn.DefaultAdamConfig().Build(tw.vs, hp.LR)
	if err != nil {
		tw.close()
		return nil, fmt.Errorf("unable to build the optimiser: %w", err)
	}
	t := &lmTrainer{tw: tw, opt: opt, hp: hp, kl: kl}
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
	logp, ent, err := lmScore(ctx, t.tw, batch, t.tw.logits)
	if err != nil {
		return st, err
	}
	s := &scope{}
	s.tmp = append(s.tmp, logp)
	defer func() { _ = s.finish() }()
	var refT *ts.Tensor
	if t.kl > 0 {
		if refT, err = t.reference(ctx, s, batch); err != nil {
			return st, err
		}
	}
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
	var klLoss *ts.Tensor
	if refT != nil {
		// ½(logp−ref)², the k2 estimator, as the loss: its gradient is
		// the reverse KL(π‖π_ref)'s on samples from π, and grows linearly.
		// k3 = exp(ref−logp) − (ref−logp) − 1 is the better estimate of
		// the divergence's value (reported as RefKL), but as a loss its
		// gradient is biased and explodes on an answer the update pushed
		// far down (TestLMKLPenalty's toy model, with k3 as the loss: 68
		// nats on one such answer, whose gradient then drove the update).
		d := s.sub(logp, refT)
		klLoss = s.mulScalar(s.sumAll(s.mul(s.square(d), polT)), 0.5/nPol)
		total = s.add(total, s.mulScalar(klLoss, t.kl))
		if dv, err := s.values(d); err == nil {
			for i, x := range batch {
				if !x.demo {
					st.RefKL += (math.Exp(-dv[i]) + dv[i] - 1) / nPol
				}
			}
		}
	}
	for i, x := range batch {
		if !x.demo {
			st.Entropy += ent[i] / nPol
		}
	}
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

// reference is the batch's answers' log-probs [B] under the reference
// model, without a graph: a policy sample's taken at its first use (one
// pass of the trained blocks over the frozen output the policy pass just
// left in the cache) and kept on it (lmSample.ref); a demonstration's 0,
// which the policy mask leaves out.
func (t *lmTrainer) reference(ctx context.Context, s *scope, batch []*lmSample) (*ts.Tensor, error) {
	var need []*lmSample
	for _, x := range batch {
		if !x.demo && !x.ref.set {
			need = append(need, x)
		}
	}
	if len(need) > 0 {
		lp, _, err := lmScore(ctx, t.tw, need, t.tw.refLogits)
		if err != nil {
			return nil, fmt.Errorf("unable to score the answers under the reference model: %w", err)
		}
		vals, err := float64Values(lp)
		_ = lp.Drop()
		if err != nil {
			return nil, err
		}
		for i, x := range need {
			x.ref = proximal{logp: vals[i], set: true}
		}
	}
	ref := make([]float32, len(batch))
	for i, x := range batch {
		if !x.demo {
			ref[i] = float32(x.ref.logp)
		}
	}
	return s.keep(float32Tensor(ref, int64(len(batch)))), nil
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
