package actor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
)

// BackendOpenAI names the policy backend of a model behind an
// OpenAI-compatible server (Action.lm.backend).
const BackendOpenAI = "openai"

// openaiPolicy asks a model served behind an OpenAI-compatible API (vLLM,
// SGLang, llama.cpp) for each action: Prepare renders the prompt (package
// lm), Decide sends it and reads the one action out of the reply, with the
// reply's tokens and their log-probs on the event.
//
//   - A reply that names no valid action on the page becomes a noop
//     flagged invalid (Action.lm.invalid and its reason), and the reply is
//     dead-lettered: the episode goes on, as BrowserGym goes on after an
//     action error, and the learner sees what the model did.
//   - A server that refuses, times out past its retries or garbles its
//     reply fails the step (the episode is aborted, never training data),
//     and its reply is dead-lettered with the reason.
//
// The server's weights are its own: Swap ignores published weights (weight
// sync to a server is out of scope here; ARCHITECTURE.md says how vLLM and
// SGLang take updates) and Version stays 0.
type openaiPolicy struct {
	cl      *lm.Client
	set     action.Set
	prompt  lm.PromptOptions
	grammar bool
	log     *slog.Logger
	once    sync.Once
}

// NewOpenAIPolicy is the openai backend over client cl, offering the
// actions of set s in prompt's answer form; with grammar, each request
// carries the page's action grammar (lm.Grammar), so that a server that
// honours it (llama.cpp) answers only with actions the page can take.
func NewOpenAIPolicy(cl *lm.Client, s action.Set, prompt lm.PromptOptions, grammar bool, log *slog.Logger) Policy {
	if log == nil {
		log = slog.Default()
	}
	prompt.Set = s
	prompt.Answer = cmp.Or(prompt.Answer, lm.AnswerAction)
	return &openaiPolicy{cl: cl, set: s, prompt: prompt, grammar: grammar, log: log}
}

// lmInput is a prepared prompt and the page it is about (which the reply's
// bids are checked against).
type lmInput struct {
	obs  *eventspb.Observation
	msgs []lm.Message
}

func (p *openaiPolicy) Prepare(obs *eventspb.Observation) (Input, error) {
	return &lmInput{obs: obs, msgs: lm.Prompt(obs, p.prompt)}, nil
}

func (p *openaiPolicy) Decide(ctx context.Context, in Input, q Query) (Decision, error) {
	li, ok := in.(*lmInput)
	if !ok {
		return Decision{}, errForeignInput
	}
	t0 := time.Now()
	grammar := ""
	if p.grammar {
		// A greedy episode's actions already tried from this state are
		// left out, as the features network's greedy choice leaves them.
		grammar = lm.Grammar(li.obs, p.set, p.prompt.Answer, q.Avoid...)
	}
	c, err := p.cl.Complete(ctx, li.msgs, q.Greedy, grammar)
	if err != nil {
		var se *lm.ServerError
		if errors.As(err, &se) {
			err = &deadLetterError{err: err, dl: modelDeadLetter(li.obs, se.Body, se.Error())}
		}
		return Decision{}, &stageError{"model server", err}
	}
	out := &eventspb.LMOutput{
		Backend: BackendOpenAI, Model: p.cl.Model(), Answer: string(p.prompt.Answer), Text: c.Text, FinishReason: c.FinishReason,
		PromptTokens: uint32(c.PromptTokens), LatencyMs: uint32(c.Latency.Milliseconds()), Attempts: uint32(c.Attempts),
	}
	for _, t := range c.Tokens {
		out.Tokens = append(out.Tokens, t.Text)
		out.TokenLogprobs = append(out.TokenLogprobs, float32(t.Logprob))
		if t.ID >= 0 {
			out.TokenIds = append(out.TokenIds, t.ID)
		}
	}
	if len(out.TokenIds) != len(out.Tokens) {
		out.TokenIds = nil // some ids missing: none, rather than misaligned
	}
	return lmDecision(li.obs, p.set, c.Text, c.Logprob(), out, Decision{Version: 0, BatchSize: 1, InferenceMicros: time.Since(t0).Microseconds()})
}

func (p *openaiPolicy) Swap(ctx context.Context, weights []byte, version uint64) error {
	p.once.Do(func() {
		p.log.Warn("published weights not applied: the openai backend acts with the server's model", "version", version, "model", p.cl.Model())
	})
	return nil
}

func (p *openaiPolicy) Version() uint64             { return 0 }
func (p *openaiPolicy) Close(context.Context) error { return nil }

// lmDecision completes d with the action a language model's reply names
// on obs's page (both language-model backends): the action, or, when the
// reply names none (no action, a point outside the frame, an answer cut by
// the token bound), a wait flagged invalid, never run, and the reply's dead
// letter; the generation out and its log-prob logp go on the event.
func lmDecision(obs *eventspb.Observation, set action.Set, reply string, logp float64, out *eventspb.LMOutput, d Decision) (Decision, error) {
	a, perr := lm.ParseReply(reply, obs, set)
	var ev *eventspb.Action
	if perr != nil {
		ev = &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_NOOP, Raw: "noop()"}
		out.Invalid, out.InvalidReason = true, action.Clip(perr.Error(), 300)
		d.DeadLetter = modelDeadLetter(obs, []byte(reply), perr.Error())
	} else {
		var err error
		if ev, err = action.ToProto(a); err != nil {
			return Decision{}, &stageError{"model reply", err}
		}
	}
	ev.LogProb, ev.Lm = logp, out
	d.Action = ev
	return d, nil
}

// modelDeadLetter is the dlq event for a model reply the actor could not
// use: keyed by the page's episode and step, the reply (clipped by the
// client) as payload.
func modelDeadLetter(obs *eventspb.Observation, reply []byte, reason string) *eventspb.DeadLetter {
	env := obs.GetEnvelope()
	return eventspb.NewDeadLetter(nil, eventspb.DeadLetterSource{Topic: "model-server", Key: []byte(env.GetEpisodeId()), Payload: reply},
		"actor", "openai.ChatCompletion", eventspb.ReasonCode_REASON_CODE_MODEL_REPLY,
		action.Clip(fmt.Sprintf("step %d: %s", env.GetStep(), reason), 500))
}

// deadLetterError is a decision's failure with the dead letter that records
// it; the executor publishes it before it aborts the episode.
type deadLetterError struct {
	err error
	dl  *eventspb.DeadLetter
}

func (e *deadLetterError) Error() string { return e.err.Error() }
func (e *deadLetterError) Unwrap() error { return e.err }
