package backend

import (
	"log/slog"

	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
)

// Policy is the backend cfg names: nil for features (the actor's own
// inference server on published weights), else the Policy to act with.
func Policy(cfg *config.Config, log *slog.Logger) (actor.Policy, error) {
	if cfg.PolicyBackend != "openai" {
		return nil, nil
	}
	o := cfg.OpenAI
	cl, err := lm.NewClient(lm.Config{BaseURL: o.BaseURL, Model: o.Model, APIKey: o.APIKey.Reveal(),
		Timeout: o.Timeout, Retries: o.Retries, MaxTokens: o.MaxTokens})
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	log.Info("policy backend: a model behind an OpenAI-compatible server", "base_url", o.BaseURL, "model", o.Model, "grammar", o.Grammar, "api_key", o.APIKey)
	return actor.NewOpenAIPolicy(cl, action.Set(cfg.ActionSet), lm.PromptOptions{}, o.Grammar, log), nil
}

// Option is Policy as the actor's option: none for features.
func Option(cfg *config.Config, log *slog.Logger) ([]actor.Option, error) {
	p, err := Policy(cfg, log)
	if err != nil || p == nil {
		return nil, err
	}
	return []actor.Option{actor.WithPolicy(func([]byte, uint64) (actor.Policy, error) { return p, nil })}, nil
}
