package learner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/casstore"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
	"github.com/asyncwebrl/asyncwebrl/services/lm/tokenizer"
)

// LMConfig is a language-model policy's training (WithLanguageModel): the
// base model, its tokenizer and end token, the run's action set (the
// prompts' and the constraint's), and how many top blocks learn.
type LMConfig struct {
	Model     *llama.Model
	Tokenizer *tokenizer.Tokenizer
	EOS       int32
	Set       action.Set
	// Answer is the run's answer form (config.LM.Answer), the form a
	// demonstration is cloned in; a model's step is scored in the form it
	// recorded (Action.lm.answer). "": lm.AnswerAction.
	Answer      lm.Answer
	TrainBlocks int
	// LR is Adam's learning rate on the trained blocks; 0 takes the
	// learner's (WithHyper).
	LR float64
	// KL weighs the penalty on the answers' divergence from Model, the
	// base (config.LM.KL); 0: none.
	KL float64
	// FrozenCache bounds, in bytes, the frozen blocks' outputs kept between
	// the updates that draw a sample again (lm_frozen.go); 0 takes
	// DefaultFrozenCacheBytes, below 0 turns it off.
	FrozenCache int64
	// Frozen is the store the actors keep their frozen-block states in
	// (Action.lm.frozen_sha256); nil: the learner computes them all.
	Frozen *casstore.Store
}

// frozenCacheBytes is c's cache budget, 0 when off.
func (c LMConfig) frozenCacheBytes() int64 {
	switch {
	case c.FrozenCache < 0:
		return 0
	case c.FrozenCache == 0:
		return DefaultFrozenCacheBytes
	}
	return c.FrozenCache
}

// versionBytes is about what a version of c's model weighs on the weights
// topic: its trained tensors as float32 (llama.EncodeWeights adds a few
// hundred bytes of names and headers, which the topic's margin covers).
func (c LMConfig) versionBytes() int {
	n := 0
	for _, w := range c.Model.Tensors() {
		if lmTrainable(c.Model.Shape.Blocks, c.TrainBlocks, w.Name) {
			n += 4 * len(w.Data)
		}
	}
	return n
}

// WithLanguageModel trains the lm backend's model instead of the features
// network: samples are the answers' tokens (lmSample), updates GRPO on
// their constrained log-probs (lmTrainer), versions the trained blocks
// (llama.WeightsFormat). A non-grouped algorithm is taken as grpo-plain:
// the model has no critic.
func WithLanguageModel(c LMConfig) Option { return func(o *options) { o.lm = &c } }

// lmMode is the learner's language-model state.
type lmMode struct {
	cfg LMConfig
	dec *lm.Decoder
	// model is the base with the newest version's tensors (adopt).
	model *llama.Model
}

func newLMMode(c LMConfig) *lmMode {
	return &lmMode{cfg: c, dec: lm.NewDecoder(c.Tokenizer, c.EOS), model: c.Model}
}

// sampleOf is tr's step as a language-model sample.
func (l *lmMode) sampleOf(tr *eventspb.Transition) (*lmSample, error) {
	return newLMSample(l.cfg.Tokenizer, l.dec, tr.GetObs(), tr.GetAction(), l.cfg.Set, l.cfg.Answer)
}

// adopt takes a published version's tensors into the base model.
func (l *lmMode) adopt(blob []byte) error {
	ts, err := llama.DecodeWeights(blob)
	if err != nil {
		return err
	}
	next := l.model.Clone()
	if err := next.SetTensors(ts); err != nil {
		return err
	}
	l.model = next
	return nil
}

// lmStepper adapts lmTrainer to the learner's loop: samples in, a version
// out.
type lmStepper struct {
	t    *lmTrainer
	mode *lmMode
	// ctx is the learner's run: a stop ends an update between samples.
	ctx context.Context
}

func (s *lmStepper) step(batch []*sample) (stepStats, error) {
	lb := make([]*lmSample, len(batch))
	for i, x := range batch {
		if x.lm == nil {
			return stepStats{}, fmt.Errorf("unable to train the language model on a sample without tokens")
		}
		ls := *x.lm
		ls.logpOld, ls.adv, ls.demo = x.logpOld, x.adv, x.demo
		ls.prox = x.prox
		lb[i] = &ls
	}
	st, err := s.t.step(s.ctx, lb)
	for i, x := range batch {
		if lb[i].prox.set && !x.prox.set {
			x.prox = lb[i].prox
		}
		if lb[i].ref.set && !x.lm.ref.set {
			x.lm.ref = lb[i].ref
		}
	}
	st.Staleness, st.MaxStaleness = 0, 0
	return st, err
}

func (s *lmStepper) close() { s.t.close() }

// export is the version's blob: the trained tensors as .npz.
func (s *lmStepper) export() (blob []byte, format, arch, sum string, err error) {
	ts, err := s.t.trained(s.mode.model)
	if err != nil {
		return nil, "", "", "", err
	}
	if blob, err = llama.EncodeWeights(ts); err != nil {
		return nil, "", "", "", err
	}
	h := sha256.Sum256(blob)
	return blob, llama.WeightsFormat, fmt.Sprintf(`{"model":%q,"train_blocks":%d}`, s.mode.model.String(), s.mode.cfg.TrainBlocks),
		hex.EncodeToString(h[:]), nil
}
