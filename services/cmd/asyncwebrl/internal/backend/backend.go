package backend

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/casstore"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
	"github.com/asyncwebrl/asyncwebrl/services/lm/tokenizer"
)

// Policy is the backend cfg names: nil for features (the actor's own
// inference server on published weights), else the Policy to act with.
func Policy(cfg *config.Config, log *slog.Logger) (actor.Policy, error) {
	switch cfg.PolicyBackend {
	case "lm":
		return lmPolicy(cfg, log)
	case "openai":
	default:
		return nil, nil
	}
	o := cfg.OpenAI
	cl, err := lm.NewClient(lm.Config{BaseURL: o.BaseURL, Model: o.Model, APIKey: o.APIKey.Reveal(),
		Timeout: o.Timeout, Retries: o.Retries, MaxTokens: o.MaxTokens})
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	log.Info("policy backend: a model behind an OpenAI-compatible server", "base_url", o.BaseURL, "model", o.Model, "grammar", o.Grammar, "answer", cfg.LM.Answer, "api_key", o.APIKey)
	return actor.NewOpenAIPolicy(cl, action.Set(cfg.ActionSet), lm.PromptOptions{Answer: lm.Answer(cfg.LM.Answer)}, o.Grammar, log), nil
}

// Option is Policy as the actor's option: none for features.
func Option(cfg *config.Config, log *slog.Logger) ([]actor.Option, error) {
	p, err := Policy(cfg, log)
	if err != nil || p == nil {
		return nil, err
	}
	return []actor.Option{actor.WithPolicy(func(weights []byte, version uint64) (actor.Policy, error) {
		// A restarted actor of an lm run resumes the newest version.
		if cfg.PolicyBackend == "lm" && version > 0 && len(weights) > 0 {
			if err := p.Swap(context.Background(), weights, version); err != nil {
				log.Warn("the newest published version does not load; acting with the base model", "version", version, "err", err)
			}
		}
		return p, nil
	})}, nil
}

// LM is a language model loaded for the lm backend.
type LM struct {
	Model     *llama.Model
	Tokenizer *tokenizer.Tokenizer
	EOS       int32
	Name      string
}

// LoadLM reads -lm-model: the weights, the tokenizer, the end token; the
// chat template must be ChatML.
func LoadLM(cfg *config.Config) (*LM, error) {
	f, err := gguf.Open(cfg.LM.Model)
	if err != nil {
		return nil, fmt.Errorf("unable to load the lm backend's model (infra/setup.sh lm fetches SmolLM2-135M): %w", err)
	}
	if err := lm.CheckChatML(f.String("tokenizer.chat_template")); err != nil {
		return nil, fmt.Errorf("unable to use %s: %w", cfg.LM.Model, err)
	}
	tok, err := f.Tokenizer()
	if err != nil {
		return nil, err
	}
	eos, ok := tok.ID("<|im_end|>")
	if !ok {
		return nil, fmt.Errorf("unable to use %s: no <|im_end|> token", cfg.LM.Model)
	}
	m, err := llama.Load(f)
	if err != nil {
		return nil, err
	}
	return &LM{Model: m, Tokenizer: tok, EOS: eos, Name: cmp.Or(f.String("general.name"), filepath.Base(cfg.LM.Model))}, nil
}

// lmPolicy loads the GGUF model and starts the lm backend on it.
func lmPolicy(cfg *config.Config, log *slog.Logger) (actor.Policy, error) {
	t0 := time.Now()
	l, err := LoadLM(cfg)
	if err != nil {
		return nil, err
	}
	p, err := LMPolicy(cfg, l, log)
	if err != nil {
		return nil, err
	}
	log.Info("policy backend: a language model in the actor", "model", l.Name, "file", cfg.LM.Model, "shape", l.Model.String(), "loaded_in", time.Since(t0).Round(time.Millisecond))
	return p, nil
}

// LMPolicy writes l's ONNX graph and starts an lm backend on it; several
// share one loaded model (replay eval's base model and trained version).
func LMPolicy(cfg *config.Config, l *LM, log *slog.Logger) (actor.Policy, error) {
	// The session taps the hidden states below the learner's trained
	// blocks, which the actor keeps for it (config.LM.FrozenStates).
	var store *casstore.Store
	tap := 0
	if n := l.Model.Shape.Blocks - cfg.LM.TrainBlocks; cfg.LM.FrozenStates && n > 0 && n < l.Model.Shape.Blocks {
		var err error
		if store, err = casstore.Open(config.FrozenDir(cfg.RunDir)); err != nil {
			return nil, err
		}
		tap = n
	}
	sess, err := llama.NewTapSession(l.Model.ONNXTap(tap), l.Model.Shape, cfg.LM.Threads, tap)
	if err != nil {
		return nil, err
	}
	p, err := actor.NewLMPolicy(actor.LMModel{Model: l.Model, Session: sess, Tokenizer: l.Tokenizer, Name: l.Name, EOS: l.EOS, Threads: cfg.LM.Threads, Frozen: store, Temperature: cfg.LM.Temperature},
		action.Set(cfg.ActionSet), lm.Answer(cfg.LM.Answer), cfg.LM.MaxTokens, log)
	if err != nil {
		_ = sess.Close()
		return nil, err
	}
	return p, nil
}
