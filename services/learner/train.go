package learner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"

	"github.com/asyncwebrl/asyncwebrl/services/internal/enum"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// Algo is the policy-gradient objective.
type Algo string

const (
	// PPO is the clipped surrogate with a value baseline and an entropy
	// bonus, in AReaL's decoupled form (Fu et al. 2025): the ratio that is
	// clipped is against a proximal policy, the learner's parameters when
	// the sample was first trained on, and the stored behaviour log-prob
	// only weighs the sample (π_prox/π_behav, off above BehaviourCap). An
	// async sample acted by a version k behind is then corrected for the
	// k versions without those versions' steps being clipped as this
	// update's.
	PPO Algo = "ppo"
	// PPOPlain clips the ratio exp(logp - logp_old) against the stored
	// behaviour log-prob itself: PPO as written for on-policy data.
	PPOPlain Algo = "ppo-plain"
	// Reinforce is the plain score-function gradient with a learned value
	// baseline; it ignores logp_old, so it is only right near on-policy.
	Reinforce Algo = "reinforce"
	// GRPO is multi-turn group-relative PPO: every step of an episode gets
	// the episode's return normalised within its group (episodes of the
	// same task seed), no critic needed; its ratio decoupled as PPO's.
	GRPO Algo = "grpo"
	// GRPOPlain is GRPO with PPOPlain's ratio.
	GRPOPlain Algo = "grpo-plain"
)

// Algos are the objectives -algo offers.
var Algos = []Algo{PPO, PPOPlain, Reinforce, GRPO, GRPOPlain}

// Grouped reports whether the objective normalises returns within groups.
func (a Algo) Grouped() bool { return a == GRPO || a == GRPOPlain }

// Decoupled reports whether the clipped ratio is against the proximal
// policy (PPO, GRPO) rather than the behaviour policy.
func (a Algo) Decoupled() bool { return a == PPO || a == GRPO }

// BehaviourCap is the largest behaviour weight π_prox/π_behav a decoupled
// sample is trained with; a sample above it is left out of the policy term
// (AReaL's cap: an action the proximal policy finds far likelier than its
// actor did says the two policies are too far apart to correct between).
const BehaviourCap = 5.0

// ParseAlgo checks a flag value.
func ParseAlgo(s string) (Algo, error) {
	return enum.Parse("algorithm", s, Algos...)
}

// Hyper are the optimisation settings.
type Hyper struct {
	Algo        Algo
	LR          float64
	ClipEps     float64
	ValueCoef   float64
	EntropyCoef float64
	// BCCoef weighs the behaviour-cloning loss of demonstration samples.
	BCCoef      float64
	MaxGradNorm float64
	// GRPONorm weighs a grouped objective's steps (default NormStep).
	GRPONorm Norm
}

// Norm is how a grouped objective weighs the steps of an episode.
type Norm string

const (
	// NormStep weighs every step alike: the batch mean, a constant 1/k
	// (AsyncWebRL's fix): an episode counts for as many steps as it has.
	NormStep Norm = "step"
	// NormTrajectory weighs a step 1/|episode| (GRPO's per-trajectory
	// mean): every episode counts alike, so each step of a long one
	// counts less, and a failure that dawdles costs no more than a quick
	// one: the bias toward long wrong episodes AsyncWebRL removed.
	NormTrajectory Norm = "trajectory"
)

// ParseNorm checks a flag value.
func ParseNorm(s string) (Norm, error) {
	return enum.Parse("GRPO normaliser", s, NormStep, NormTrajectory)
}

// stepWeights are the policy samples' weights of the objective: 1, or under
// NormTrajectory 1/|episode| scaled so that their mean is 1 (the loss keeps
// its scale, the episodes' shares change).
func stepWeights(batch []*sample, polIdx []int, norm Norm) []float32 {
	w := make([]float32, len(batch))
	for _, i := range polIdx {
		w[i] = 1
	}
	if norm != NormTrajectory || len(polIdx) == 0 {
		return w
	}
	var sum float64
	for _, i := range polIdx {
		sum += 1 / float64(max(batch[i].epLen, 1))
	}
	mean := sum / float64(len(polIdx))
	for _, i := range polIdx {
		w[i] = float32(1 / float64(max(batch[i].epLen, 1)) / mean)
	}
	return w
}

// DefaultHyper are settings that train the default architecture on the
// easy tier in minutes on two cores.
func DefaultHyper() Hyper {
	return Hyper{Algo: PPO, LR: 1e-3, ClipEps: 0.2, ValueCoef: 0.5, EntropyCoef: 0.01, BCCoef: 1, MaxGradNorm: 1}
}

// sample is one training example: a featurized stable state, the action
// taken as head indices, and what the objective needs.
type sample struct {
	feats *policy.Packed
	// lm is a language model's step (WithLanguageModel), in place of
	// feats and choice.
	lm      *lmSample
	choice  policy.Choice
	logpOld float64
	// prox is the proximal log-prob of a decoupled objective.
	prox proximal
	// ret is the discounted return from this step on.
	ret float64
	// adv is the group-relative advantage (GRPO only).
	adv float64
	// epLen is the number of steps of the sample's episode.
	epLen   int
	demo    bool
	version uint64
	// key balances batches: family/site of the task.
	key string
	// prio is the prioritized replay's priority (|advantage| seen last).
	prio float64
	uses int
}

// bytes is the memory of the sample's inputs (its replay footprint).
func (s *sample) bytes() int {
	switch {
	case s.feats != nil:
		return s.feats.Bytes()
	case s.lm != nil:
		n := len(s.lm.prompt) + len(s.lm.answer)
		for _, a := range s.lm.allowed {
			n += len(a)
		}
		return 4 * n
	}
	return 0
}

// stepStats are one update's diagnostics.
type stepStats struct {
	Loss, PolicyLoss, ValueLoss, Entropy, BCLoss, ClipFrac, ApproxKL float64
	// RefKL is the language model's divergence from its reference: the
	// mean k3 estimate, exp(ref−logp) − (ref−logp) − 1, over the batch's
	// policy samples (0 without the penalty).
	RefKL float64
	// BehaviourWeight is the mean π_prox/π_behav of the batch's policy
	// samples under a decoupled objective (1 under the others), and
	// BehaviourCapped the share left out above BehaviourCap.
	BehaviourWeight, BehaviourCapped float64
	// Staleness and MaxStaleness are the mean and largest policy lag of the
	// batch's policy samples: the version being trained (newest published
	// + 1) minus the version that acted the sample.
	Staleness, MaxStaleness float64
	Policy, Demo            int
	// FrozenHits and FrozenMisses are the lm backend's samples whose
	// frozen blocks' output came from the twin's cache or was computed.
	FrozenHits, FrozenMisses int64
	// FrozenLoaded of them came from the actor's copy (frozenRef),
	// FrozenComputed ran the frozen blocks; FrozenLoadFailed had a copy
	// that could not be read (and were computed).
	FrozenLoaded, FrozenComputed, FrozenLoadFailed int64
	// absAdv[i] is |advantage| of batch sample i (the new priority).
	absAdv []float64
}

// trainer owns the model and its optimiser. All methods run on the torch
// thread.
type trainer struct {
	arch  policy.Architecture
	model *policyModel
	opt   *nn.Optimizer
	hp    Hyper
}

func newTrainer(arch policy.Architecture, params policy.Params, hp Hyper) (*trainer, error) {
	m, err := newPolicyModel(arch, params)
	if err != nil {
		return nil, err
	}
	opt, err := nn.DefaultAdamConfig().Build(m.vs, hp.LR)
	if err != nil {
		m.close()
		return nil, fmt.Errorf("unable to build the optimiser: %w", err)
	}
	return &trainer{arch: arch, model: m, opt: opt, hp: hp}, nil
}

func (t *trainer) close() { t.model.close() }

// stepper is what the learner's loop trains: the features network's
// trainer or the language model's (lmStepper). export is the version to
// publish: its blob, the blob's format, the architecture note and the
// blob's hex sha256.
type stepper interface {
	step(batch []*sample) (stepStats, error)
	close()
	export() (blob []byte, format, arch, sum string, err error)
}

// export writes the network as ONNX.
func (t *trainer) export() (blob []byte, format, arch, sum string, err error) {
	params, err := t.model.exportParams()
	if err != nil {
		return nil, "", "", "", err
	}
	if blob, err = policy.WriteONNX(t.arch, params); err != nil {
		return nil, "", "", "", err
	}
	if arch, err = t.arch.JSON(); err != nil {
		return nil, "", "", "", err
	}
	h := sha256.Sum256(blob)
	return blob, "onnx", arch, hex.EncodeToString(h[:]), nil
}

// step runs one gradient update on batch. Demonstration samples get the
// behaviour-cloning loss -log π(a_demo|s); policy samples the algorithm's.
func (t *trainer) step(batch []*sample) (stepStats, error) {
	var st stepStats
	B := len(batch)
	if B == 0 {
		return st, fmt.Errorf("unable to train on an empty batch")
	}
	ps := make([]*policy.Packed, B)
	choices := make([]policy.Choice, B)
	for i, s := range batch {
		ps[i], choices[i] = s.feats, s.choice
	}
	stacked, err := t.arch.StackPacked(ps)
	if err != nil {
		return st, err
	}
	in, err := batchInputs(stacked)
	if err != nil {
		return st, err
	}
	defer func() {
		for _, x := range in {
			_ = x.Drop()
		}
	}()
	out, err := t.model.forward(in)
	if err != nil {
		return st, err
	}
	s := &scope{}
	s.tmp = append(s.tmp, out.typeLogits, out.elemLogits, out.candLogits, out.value, out.pointLogits, out.pointOffsets)
	defer func() { _ = s.finish() }()

	values, err := float64Values(out.value)
	if err != nil {
		return st, err
	}
	// Advantages are computed in Go: the value is a baseline, never
	// differentiated through the policy term.
	adv := make([]float64, B)
	polMask, demoMask := make([]float32, B), make([]float32, B)
	var polIdx []int
	for i, x := range batch {
		if x.demo {
			demoMask[i] = 1
			st.Demo++
			continue
		}
		polMask[i] = 1
		st.Policy++
		polIdx = append(polIdx, i)
		if t.hp.Algo.Grouped() {
			adv[i] = x.adv
		} else {
			adv[i] = x.ret - values[i]
		}
	}
	st.absAdv = make([]float64, B)
	for i := range adv {
		st.absAdv[i] = math.Abs(adv[i])
	}
	if !t.hp.Algo.Grouped() && len(polIdx) > 1 {
		// Normalised per batch: the step size stops depending on the
		// reward scale.
		var mean, sq float64
		for _, i := range polIdx {
			mean += adv[i]
		}
		mean /= float64(len(polIdx))
		for _, i := range polIdx {
			sq += (adv[i] - mean) * (adv[i] - mean)
		}
		std := math.Sqrt(sq/float64(len(polIdx))) + 1e-6
		for _, i := range polIdx {
			adv[i] = (adv[i] - mean) / std
		}
	}
	advF, retF, oldF := make([]float32, B), make([]float32, B), make([]float32, B)
	for i, x := range batch {
		advF[i], retF[i], oldF[i] = float32(adv[i]), float32(x.ret), float32(x.logpOld)
	}
	Bn := int64(B)
	advT := s.keep(float32Tensor(advF, Bn))
	retT := s.keep(float32Tensor(retF, Bn))
	oldT := s.keep(float32Tensor(oldF, Bn))
	polT := s.keep(float32Tensor(polMask, Bn))
	pgW := polT // the policy term's weights: the mask, or GRPO's normaliser's
	if t.hp.Algo.Grouped() {
		pgW = s.keep(float32Tensor(stepWeights(batch, polIdx, t.hp.GRPONorm), Bn))
	}
	demoT := s.keep(float32Tensor(demoMask, Bn))
	if s.err != nil {
		return st, s.err
	}
	logp, err := jointLogProb(&t.arch, out, choices)
	if err != nil {
		return st, err
	}
	s.tmp = append(s.tmp, logp)
	ent, err := jointEntropy(&t.arch, out)
	if err != nil {
		return st, err
	}
	s.tmp = append(s.tmp, ent)

	var pgPer *ts.Tensor // [B], per-sample policy loss
	st.BehaviourWeight = 1
	switch t.hp.Algo {
	case Reinforce:
		pgPer = s.neg(s.mul(logp, advT))
	default: // PPO, GRPO: the clipped surrogate
		anchor := oldT
		var behav *ts.Tensor
		if t.hp.Algo.Decoupled() {
			if anchor, behav, err = t.decouple(s, logp, batch, polIdx, oldF, &st); err != nil {
				return st, err
			}
		}
		ratio := s.exp(s.sub(logp, anchor))
		clipped := s.clamp(ratio, 1-t.hp.ClipEps, 1+t.hp.ClipEps)
		pgPer = s.neg(s.minimum(s.mul(ratio, advT), s.mul(clipped, advT)))
		if behav != nil {
			pgPer = s.mul(pgPer, behav)
		}
		if r, err := s.values(ratio); err == nil {
			var kl float64
			for _, i := range polIdx {
				if math.Abs(r[i]-1) > t.hp.ClipEps {
					st.ClipFrac++
				}
				kl += -math.Log(math.Max(r[i], 1e-12))
			}
			if len(polIdx) > 0 {
				st.ClipFrac /= float64(len(polIdx))
				st.ApproxKL = kl / float64(len(polIdx))
			}
		}
	}
	nPol, nDemo := float64(max(st.Policy, 1)), float64(max(st.Demo, 1))
	pgLoss := s.mulScalar(s.sumAll(s.mul(pgPer, pgW)), 1/nPol)
	entMean := s.mulScalar(s.sumAll(s.mul(ent, polT)), 1/nPol)
	bcLoss := s.mulScalar(s.sumAll(s.mul(s.neg(logp), demoT)), 1/nDemo)
	v := s.reshape(out.value, -1)
	// Demonstrations carry no return: the value learns on policy samples.
	vLoss := s.mulScalar(s.sumAll(s.mul(s.square(s.sub(v, retT)), polT)), 1/nPol)
	var total *ts.Tensor
	if t.hp.Algo.Grouped() {
		// No critic in GRPO's objective; the value head still learns (a
		// small term) so that a switch to PPO starts from a baseline.
		total = s.add(pgLoss, s.mulScalar(vLoss, 0.1*t.hp.ValueCoef))
	} else {
		total = s.add(pgLoss, s.mulScalar(vLoss, t.hp.ValueCoef))
	}
	total = s.sub(total, s.mulScalar(entMean, t.hp.EntropyCoef))
	total = s.add(total, s.mulScalar(bcLoss, t.hp.BCCoef))
	if s.err != nil {
		return st, fmt.Errorf("unable to compute the loss: %w", s.err)
	}
	for _, x := range []struct {
		t   *ts.Tensor
		dst *float64
	}{{total, &st.Loss}, {pgLoss, &st.PolicyLoss}, {vLoss, &st.ValueLoss}, {entMean, &st.Entropy}, {bcLoss, &st.BCLoss}} {
		vals, err := float64Values(x.t)
		if err != nil {
			return st, err
		}
		*x.dst = vals[0]
	}
	if math.IsNaN(st.Loss) || math.IsInf(st.Loss, 0) {
		return st, fmt.Errorf("unable to train: the loss is %v", st.Loss)
	}
	if err := t.backwardStep(total); err != nil {
		return st, fmt.Errorf("unable to take an optimiser step: %w", err)
	}
	return st, nil
}

// backwardStep is zero-grad, backward, clip the global gradient norm to
// MaxGradNorm, step. gotch's own BackwardStepClipNorm takes the var store's
// lock twice (ClipGradNorm, then TrainableVariables) and deadlocks, so the
// clipping is done here on the model's parameters.
func (t *trainer) backwardStep(loss *ts.Tensor) error {
	params := make([]*ts.Tensor, 0, len(t.model.params))
	for _, p := range t.model.params {
		params = append(params, p)
	}
	return clippedStep(t.opt, params, loss, t.hp.MaxGradNorm)
}

// clippedStep is backwardStep for any model: zero-grad, backward, clip the
// global gradient norm of params to maxNorm (0: no clipping), step.
func clippedStep(opt *nn.Optimizer, params []*ts.Tensor, loss *ts.Tensor, maxNorm float64) error {
	if err := opt.ZeroGrad(); err != nil {
		return err
	}
	if err := loss.Backward(); err != nil {
		return err
	}
	if maxNorm > 0 {
		grads := make([]*ts.Tensor, 0, len(params))
		defer func() {
			for _, g := range grads {
				_ = g.Drop()
			}
		}()
		var sq float64
		for _, p := range params {
			g, err := p.Grad(false)
			if err != nil {
				return err
			}
			grads = append(grads, g)
			if ok, err := g.Defined(); err != nil || !ok {
				continue // a parameter the loss does not reach
			}
			n, err := g.Norm(false)
			if err != nil {
				return err
			}
			v, err := float64Values(n)
			_ = n.Drop()
			if err != nil {
				return err
			}
			sq += v[0] * v[0]
		}
		norm := math.Sqrt(sq)
		if math.IsNaN(norm) || math.IsInf(norm, 0) {
			return fmt.Errorf("the gradient norm is %v", norm)
		}
		if coef := maxNorm / (norm + 1e-6); coef < 1 {
			for _, g := range grads {
				if ok, err := g.Defined(); err == nil && ok {
					if _, err := withScalar(coef, func(sc *ts.Scalar) (*ts.Tensor, error) {
						return nil, g.MulScalar_(sc)
					}); err != nil {
						return err
					}
				}
			}
		}
	}
	return opt.Step()
}

// values copies x out (detached).
func (s *scope) values(x *ts.Tensor) ([]float64, error) {
	if !s.ok(x) {
		return nil, s.err
	}
	return float64Values(x)
}

func (s *scope) sub(x, y *ts.Tensor) *ts.Tensor {
	if !s.ok(x, y) {
		return nil
	}
	return s.keep(x.Sub(y, false))
}

func (s *scope) clamp(x *ts.Tensor, lo, hi float64) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(withScalars(lo, hi, func(a, b *ts.Scalar) (*ts.Tensor, error) {
		return x.Clamp(a, b, false)
	}))
}

func (s *scope) minimum(x, y *ts.Tensor) *ts.Tensor {
	if !s.ok(x, y) {
		return nil
	}
	return s.keep(x.Minimum(y, false))
}

func (s *scope) square(x *ts.Tensor) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.Square(false))
}

func (s *scope) mulScalar(x *ts.Tensor, v float64) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(withScalar(v, func(sc *ts.Scalar) (*ts.Tensor, error) {
		return x.MulScalar(sc, false)
	}))
}

// sumAll sums every element into a scalar tensor.
func (s *scope) sumAll(x *ts.Tensor) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.Sum(gotch.Float, false))
}

// staleness returns the mean and largest policy lag of batch's policy
// (non-demonstration) samples when version training is being trained.
func staleness(batch []*sample, training uint64) (mean, largest float64) {
	n := 0
	for _, b := range batch {
		if b.demo {
			continue
		}
		lag := 0.0
		if training > b.version {
			lag = float64(training - b.version)
		}
		mean += lag
		largest = max(largest, lag)
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return mean / float64(n), largest
}

// decouple gives a decoupled objective's clip anchor (the proximal
// log-probs, [B]) and behaviour weights ([B], 0 above BehaviourCap). A
// policy sample trained on for the first time takes its log-prob under
// the current parameters as its proximal one, so its ratio starts at 1;
// its later uses are clipped against that. Demonstrations get weight 0
// (their policy term is masked anyway).
func (t *trainer) decouple(s *scope, logp *ts.Tensor, batch []*sample, polIdx []int, old []float32, st *stepStats) (anchor, behav *ts.Tensor, err error) {
	return decoupled(s, logp, old, polIdx, func(i int) (*proximal, float64) { return &batch[i].prox, batch[i].logpOld }, st)
}

// proximal is a sample's proximal log-prob in a decoupled objective: its
// log-prob under the learner's parameters at its first use, taken then
// (set) and kept for its later uses, so that its ratio starts at 1.
type proximal struct {
	logp float64
	set  bool
}

// at is the proximal log-prob, now at the first use.
func (p *proximal) at(now float64) float64 {
	if !p.set {
		p.logp, p.set = now, true
	}
	return p.logp
}

// decoupled is the decoupled objective's anchor and weights over a batch
// of len(old) samples, the features network's and the language model's:
// a sample not in polIdx keeps its behaviour log-prob as anchor and weight
// 0; proxOf gives sample i's proximal log-prob and its behaviour one.
func decoupled(s *scope, logp *ts.Tensor, old []float32, polIdx []int, proxOf func(i int) (prox *proximal, old float64), st *stepStats) (anchor, behav *ts.Tensor, err error) {
	now, err := s.values(logp)
	if err != nil {
		return nil, nil, err
	}
	B := len(old)
	prox, w := slices.Clone(old), make([]float32, B)
	var sum float64
	capped := 0
	for _, i := range polIdx {
		p, lo := proxOf(i)
		lp := p.at(now[i])
		prox[i] = float32(lp)
		r := math.Exp(lp - lo)
		if r > BehaviourCap || math.IsNaN(r) {
			capped++
			continue
		}
		w[i] = float32(r)
		sum += r
	}
	if n := len(polIdx); n > 0 {
		st.BehaviourCapped = float64(capped) / float64(n)
		if n > capped {
			st.BehaviourWeight = sum / float64(n-capped)
		}
	}
	anchor, behav = s.keep(float32Tensor(prox, int64(B))), s.keep(float32Tensor(w, int64(B)))
	return anchor, behav, s.err
}
