package actor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/casstore"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
	"github.com/asyncwebrl/asyncwebrl/services/lm/tokenizer"
)

// BackendLM names the in-process language model backend (Action.lm.backend).
const BackendLM = "lm"

// LMModel is what the lm backend runs: the model (its weights, for a new
// version's), its ONNX session, its tokenizer and its name.
type LMModel struct {
	Model     *llama.Model
	Session   *llama.Session
	Tokenizer *tokenizer.Tokenizer
	Name      string
	// EOS ends an answer (<|im_end|> for ChatML models).
	EOS int32
	// Threads is ONNX Runtime's intra-op threads of a new version's
	// session (0: its choice).
	Threads int
	// Temperature is sampled steps' (lm.Sampling; 0: 1), recorded on
	// each action (Action.lm.temperature) for the learner to score at.
	Temperature float64
	// Frozen keeps, for each sampled step, the hidden states after the
	// session's tap block (Session.Tap, the blocks the learner does not
	// train) in this store, named on the action (Action.lm.frozen_sha256):
	// the learner then runs the trained blocks alone. Nil, or an untapped
	// session: none are kept.
	Frozen *casstore.Store
}

// lmPolicy is a language model in the actor's process: the same prompt as
// the openai backend (package lm), rendered in ChatML, run on ONNX Runtime
// (package llama) from a cached system-prompt prefix, and decoded under the
// page's Language, so that every answer is an action the page can take. The
// behaviour log-prob of each token is under that constrained distribution
// (the softmax over the allowed tokens), as the learner's twin will compute
// it from the same page.
type lmPolicy struct {
	m         LMModel
	set       action.Set
	answer    lm.Answer
	dec       *lm.Decoder
	maxTokens int
	log       *slog.Logger
	prefixIDs []int32

	// mu guards the serving state: decisions hold it for reading while
	// they generate; a swap takes it to replace the state, so the old
	// session closes only after the decisions on it are done.
	mu    sync.RWMutex
	serve *lmServing
	rngMu sync.Mutex
	rng   *rand.Rand
}

// lmServing is one version's session and its system prompt's cache.
type lmServing struct {
	sess    *llama.Session
	prefix  *llama.KV
	version uint64
}

// NewLMPolicy is the lm backend over model m with action set s, answering
// in form a; answers longer than maxTokens tokens end the step as an
// invalid answer.
func NewLMPolicy(m LMModel, s action.Set, a lm.Answer, maxTokens int, log *slog.Logger) (Policy, error) {
	if log == nil {
		log = slog.Default()
	}
	p := &lmPolicy{m: m, set: s, answer: a, dec: lm.NewDecoder(m.Tokenizer, m.EOS), maxTokens: maxTokens, log: log,
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x1ad))}
	// The system message is the same for every decision: run once, its
	// keys and values copied into each decision's cache.
	p.prefixIDs = lm.SystemIDs(m.Tokenizer, s, a)
	var err error
	if p.serve, err = p.serving(m.Session, 0); err != nil {
		return nil, err
	}
	return p, nil
}

// serving runs the system prompt on sess.
func (p *lmPolicy) serving(sess *llama.Session, version uint64) (*lmServing, error) {
	kv := sess.NewKV()
	if _, err := sess.Run(p.prefixIDs, kv); err != nil {
		return nil, fmt.Errorf("unable to run the system prompt: %w", err)
	}
	return &lmServing{sess: sess, prefix: kv, version: version}, nil
}

// lmPrompt is a decision's prepared input: the page and its user turn's
// tokens.
type lmPrompt struct {
	obs *eventspb.Observation
	ids []int32
}

func (p *lmPolicy) Prepare(obs *eventspb.Observation) (Input, error) {
	return &lmPrompt{obs: obs, ids: lm.UserIDs(p.m.Tokenizer, obs, p.set)}, nil
}

func (p *lmPolicy) Decide(ctx context.Context, in Input, q Query) (Decision, error) {
	lp, ok := in.(*lmPrompt)
	if !ok {
		return Decision{}, errForeignInput
	}
	t0 := time.Now()
	p.mu.RLock()
	defer p.mu.RUnlock()
	sv := p.serve
	lang := lm.NewLanguage(lp.obs, p.set, p.answer, q.Avoid...)
	kv := sv.prefix.Clone()
	// A sampled step on a tapped session keeps the hidden states of every
	// token it feeds (greedy steps are evaluation: no training data).
	tap := !q.Greedy && p.m.Frozen != nil && sv.sess.Tap() > 0
	var hidden []float32
	run := func(ids []int32) ([]float32, error) {
		if !tap {
			return sv.sess.Run(ids, kv)
		}
		logits, h, err := sv.sess.Hidden(ids, kv)
		hidden = append(hidden, h...)
		return logits, err
	}
	logits, err := run(lp.ids)
	if err != nil {
		return Decision{}, &stageError{"inference", err}
	}
	rng := q.RNG
	if rng == nil {
		p.rngMu.Lock()
		rng = rand.New(rand.NewPCG(p.rng.Uint64(), p.rng.Uint64()))
		p.rngMu.Unlock()
	}
	out := &eventspb.LMOutput{Backend: BackendLM, Model: p.m.Name, Answer: string(p.answer), PromptTokens: uint32(len(p.prefixIDs) + len(lp.ids)), Attempts: 1}
	// The temperature as the event holds it (float32), so the learner
	// scores at the very one the tokens were drawn at.
	temp := float32(cmp.Or(p.m.Temperature, 1))
	if !q.Greedy {
		out.Temperature = temp
	}
	var text strings.Builder
	var logp float64
	finish := "length"
	// The tokens allowed next, asked once a token: to stop on an answer
	// nothing can follow, and then to pick from.
	allowed, end := p.dec.Allowed(lang, "")
	for len(out.TokenIds) < p.maxTokens {
		if ctx.Err() != nil {
			return Decision{}, ctx.Err()
		}
		c, err := p.dec.PickFrom(allowed, end, logits, lm.Sampling{Greedy: q.Greedy, Temperature: lm.TokenTemperature(lang, text.String(), float64(temp)), RNG: rng})
		if err != nil {
			return Decision{}, &stageError{"sampling", err}
		}
		out.TokenIds = append(out.TokenIds, c.ID)
		out.Tokens = append(out.Tokens, p.m.Tokenizer.Token(c.ID))
		out.TokenLogprobs = append(out.TokenLogprobs, float32(c.Logprob))
		logp += c.Logprob
		if c.End {
			finish = "stop"
			break
		}
		text.WriteString(c.Text)
		if allowed, end = p.dec.Allowed(lang, text.String()); len(allowed) == 0 {
			finish = "stop" // complete, and nothing can follow
			break
		}
		if logits, err = run([]int32{c.ID}); err != nil {
			return Decision{}, &stageError{"inference", err}
		}
	}
	// An answer cut by the bound may end inside a character: the event
	// holds valid UTF-8 (the token ids hold the bytes).
	out.Text, out.FinishReason = strings.ToValidUTF8(text.String(), "\uFFFD"), finish
	if tap {
		p.keepFrozen(out, hidden, len(lp.ids)+len(out.TokenIds)-1, sv.sess.Tap(), sv.sess.Shape().Width)
	}
	out.LatencyMs = uint32(time.Since(t0).Milliseconds())
	return lmDecision(lp.obs, p.set, out.Text, logp, out, Decision{Version: sv.version, BatchSize: 1, InferenceMicros: time.Since(t0).Microseconds()})
}

// keepFrozen stores the first rows of hidden (the tokens the learner
// feeds: the user turn and the answer but its last token, which the
// actor fed only when the length bound cut the answer) and names them on
// out. A step whose states cannot be kept goes without: the learner then
// computes them itself, so the failure is logged, not the step's.
func (p *lmPolicy) keepFrozen(out *eventspb.LMOutput, hidden []float32, rows, tap, w int) {
	if rows <= 0 || len(hidden) < rows*w {
		return
	}
	b, err := llama.EncodeHidden(hidden[:rows*w], w)
	if err == nil {
		out.FrozenSha256, err = p.m.Frozen.Put(b)
	}
	if err != nil {
		p.log.Warn("unable to keep the step's frozen-block states", "err", err)
		out.FrozenSha256 = ""
		return
	}
	out.FrozenBlocks, out.FrozenRows = uint32(tap), uint32(rows)
}

// Swap installs version's trained tensors (llama.WeightsFormat): they are
// set into a copy of the model's weights, its ONNX graph is written and
// loaded, and the system prompt run on it, all beside the serving version;
// then decisions move to it and the old session closes.
func (p *lmPolicy) Swap(ctx context.Context, weights []byte, version uint64) error {
	ts, err := llama.DecodeWeights(weights)
	if err != nil {
		return err
	}
	next := p.m.Model.Clone()
	if err := next.SetTensors(ts); err != nil {
		return err
	}
	tap := p.m.Session.Tap()
	sess, err := llama.NewTapSession(next.ONNXTap(tap), next.Shape, p.m.Threads, tap)
	if err != nil {
		return err
	}
	sv, err := p.serving(sess, version)
	if err != nil {
		_ = sess.Close()
		return err
	}
	p.mu.Lock()
	old := p.serve
	p.serve = sv
	p.mu.Unlock()
	if old.sess != p.m.Session {
		_ = old.sess.Close()
	}
	return nil
}

func (p *lmPolicy) Version() uint64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.serve.version
}

func (p *lmPolicy) Close(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	if p.serve.sess != p.m.Session {
		errs = append(errs, p.serve.sess.Close())
	}
	return errors.Join(append(errs, p.m.Session.Close())...)
}
