package learner

import (
	"context"
	"errors"
	"fmt"

	"github.com/sugarme/gotch/ts"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
	"github.com/asyncwebrl/asyncwebrl/services/lm/tokenizer"
)

// lmSample is one step of a language-model policy as the learner scores
// it: the tokens the actor's model read (lm.SystemIDs, lm.UserIDs), the
// answer it generated (Action.lm.token_ids), and for each answer token the
// tokens the page's language allowed there (the decoder's constraint,
// replayed from the page): the behaviour distribution was the softmax over
// those, and so is the learner's.
type lmSample struct {
	prompt, answer []int32
	// system is the length of prompt's system message, the head every
	// sample of a run shares (the twin caches it: setPrefix).
	system  int
	allowed [][]int32
	logpOld float64
	// temps is each answer token's temperature (lm.TokenTemperature of
	// the one the actor recorded, Action.lm.temperature; 1 when
	// unrecorded, and for a demonstration): the behaviour distribution
	// was the softmax of logits/temp, and the learner's is too. Nil: 1
	// throughout.
	temps []float64
	// adv is the step's group-relative advantage (GRPO); demo marks a
	// demonstration, trained by cloning (−log π) instead.
	adv  float64
	demo bool
	// prox is the proximal log-prob of the decoupled objective (GRPO),
	// the answer's; lmStepper keeps it on the replay's sample.
	prox proximal
	// ref is the answer's log-prob under the reference model (the KL
	// penalty's, lmTrainer.kl), taken at the sample's first use: the
	// reference never changes.
	ref proximal
	// frozen is the sample's place in the twin's cache of frozen-block
	// outputs (lm_frozen.go); the copies a batch makes share it. Nil: the
	// sample is never cached.
	frozen *frozenSlot
}

// newLMSample rebuilds a sampled step's prompt and constraint from its
// observation and action, in the answer form the step recorded (a
// demonstration: form, the run's). Greedy steps (evaluation) are no
// training data; an action without its token ids is not a language
// model's.
func newLMSample(tok *tokenizer.Tokenizer, dec *lm.Decoder, obs *eventspb.Observation, a *eventspb.Action, set action.Set, form lm.Answer) (*lmSample, error) {
	answer := a.GetLm().GetTokenIds()
	if len(answer) == 0 {
		if a.GetEnvelope().GetSource() != eventspb.Source_SOURCE_DEMO {
			return nil, fmt.Errorf("unable to score action %s: no generated token ids", a.GetEnvelope().GetEventId())
		}
		// A demonstration is its action's text, as the model would write
		// it: cloned token by token.
		answer = tok.Encode(lm.AnswerText(obs, a, form), false)
	} else {
		form = lm.Of(a.GetLm())
	}
	sys := lm.SystemIDs(tok, set, form)
	s := &lmSample{prompt: append(sys, lm.UserIDs(tok, obs, set)...), system: len(sys), answer: answer, logpOld: a.GetLogProb(), frozen: &frozenSlot{}}
	temp := float64(a.GetLm().GetTemperature())
	tempered := temp > 0 && temp != 1
	if o := a.GetLm(); o.GetFrozenSha256() != "" {
		// The twin checks that the actor's states are the ones it needs
		// (its blocks, these tokens) before it uses them (lmTwin.load).
		s.frozen.ref = &frozenRef{sha: o.GetFrozenSha256(), blocks: int(o.GetFrozenBlocks()), rows: int(o.GetFrozenRows())}
	}
	lang := lm.NewLanguage(obs, set, form)
	text := ""
	for i, id := range s.answer {
		ids, end := dec.Allowed(lang, text)
		if end {
			ids = append(ids, dec.EOS())
		}
		found := false
		for _, x := range ids {
			found = found || x == id
		}
		if !found {
			return nil, fmt.Errorf("unable to score action %s: answer token %d (%d) is outside the page's language: %w", a.GetEnvelope().GetEventId(), i, id, errOutsideLanguage)
		}
		s.allowed = append(s.allowed, ids)
		if tempered {
			s.temps = append(s.temps, lm.TokenTemperature(lang, text, temp))
		}
		text += dec.Text(id)
	}
	return s, nil
}

// errOutsideLanguage: an answer the page's language does not hold (a
// demonstration typing a quote, a step of another action set).
var errOutsideLanguage = errors.New("not in the language")

// lmLogProbs is each sample's log-prob of its answer under the twin: the
// sum over answer tokens of the log-softmax of the logits (divided by the
// token's temperature) over the allowed tokens. The result [B] carries
// the graph to the trainable blocks. A sample's pass takes seconds on a
// long prompt: ctx is checked before each, so that a stop does not wait
// for the whole batch.
func lmLogProbs(ctx context.Context, tw *lmTwin, samples []*lmSample) (*ts.Tensor, error) {
	lp, _, err := lmScore(ctx, tw, samples, tw.logits)
	return lp, err
}

// lmScore is lmLogProbs with the logits of logits (the twin's, or its
// reference's: lmTwin.refLogits), and each answer's entropy: the sum over
// its tokens of the constrained softmax's entropy, in nats, the measure of
// how sharp the policy is (a collapse onto one answer drives it to 0).
func lmScore(ctx context.Context, tw *lmTwin, samples []*lmSample, logits func(ids []int32, from int, slot *frozenSlot) (*ts.Tensor, error)) (*ts.Tensor, []float64, error) {
	V := int64(tw.shape.Vocab)
	tw.share = true
	defer tw.endPass()
	s := &scope{}
	var per, ents []*ts.Tensor
	for _, smp := range samples {
		if err := ctx.Err(); err != nil {
			_ = s.finish()
			return nil, nil, err
		}
		if smp.system > 0 {
			if err := tw.setPrefix(smp.prompt[:smp.system]); err != nil {
				_ = s.finish()
				return nil, nil, err
			}
		}
		seq := append(append([]int32(nil), smp.prompt...), smp.answer[:len(smp.answer)-1]...)
		rows, err := logits(seq, len(smp.prompt)-1, smp.frozen) // [A, V]: the positions whose next token is the answer's
		if err != nil {
			_ = s.finish()
			return nil, nil, err
		}
		s.tmp = append(s.tmp, rows)
		A := int64(len(smp.answer))
		mask := make([]float32, A*V)
		for i := range mask {
			mask[i] = -1e9
		}
		pick := make([]int64, A)
		for i, ids := range smp.allowed {
			for _, id := range ids {
				mask[int64(i)*V+int64(id)] = 0
			}
			pick[i] = int64(smp.answer[i])
		}
		mt, err := float32Tensor(mask, A, V)
		s.keep(mt, err)
		pt, err := int64Tensor(pick, A, 1)
		s.keep(pt, err)
		if smp.temps != nil {
			inv := make([]float32, A)
			for i, t := range smp.temps {
				inv[i] = float32(1 / t)
			}
			it, err := float32Tensor(inv, A, 1)
			s.keep(it, err)
			rows = s.mul(rows, it) // [A, V]·[A, 1]: each row at its token's temperature
		}
		ls := s.logSoftmax(s.add(rows, mt), 1) // [A, V]; a masked token's p is 0, its p·log p 0
		lp := s.gather(ls, 1, pt)              // [A, 1]
		per = append(per, s.reshape(s.sumAll(lp), 1))
		ents = append(ents, s.reshape(s.neg(s.sumAll(s.mul(s.exp(ls), ls))), 1))
	}
	out := s.cat(0, per...)
	ent, err := s.values(s.cat(0, ents...))
	if err != nil {
		_ = s.finish()
		return nil, nil, fmt.Errorf("unable to score the answers: %w", err)
	}
	if err := s.finish(out); err != nil {
		return nil, nil, fmt.Errorf("unable to score the answers: %w", err)
	}
	return out, ent, nil
}
