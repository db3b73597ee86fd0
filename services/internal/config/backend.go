package config

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/lm"
)

// PolicyBackends are the values of -policy-backend.
var PolicyBackends = []string{"features", "lm", "openai"}

// LM is the in-process language model of the lm policy backend.
type LM struct {
	// Model is the GGUF file; empty: <run-dir>/lm/SmolLM2-135M-Instruct.Q4_1.gguf,
	// where infra/setup.sh lm puts it.
	Model string
	// MaxTokens bounds one answer (default 96: a target-form answer's
	// comment and a fill of 80 characters); Threads is ONNX Runtime's
	// intra-op threads per decision (default 1: the executors' decisions
	// run side by side).
	MaxTokens, Threads int
	// TrainBlocks is how many of the model's top blocks the learner
	// trains (default 2; the rest stays the base model's).
	TrainBlocks int
	// LR is Adam's learning rate on them (default 3e-5): -lr's 1e-3 is
	// the small features network's, and on SmolLM2's blocks it clipped
	// 75–100% of GRPO's ratios (12-05).
	LR float64
	// KL weighs GRPO's penalty on the divergence from the base model
	// (default 0: none), DeepSeekMath's β: ½(logp−ref)² on each sampled
	// answer, ref its log-prob under the base model's blocks, whose
	// gradient is the reverse KL's. Without it a 12-07 hour (4 blocks at
	// 1e-4) sharpened every task onto click("1") in 20 versions, the
	// answers' mean log-prob −4.7 → −0.8.
	KL float64
	// FrozenCacheMB bounds the learner's cache of what the frozen blocks
	// make of a sample, kept for its next draw (default 1024; 0: off).
	FrozenCacheMB int
	// Answer is the answers' form, the lm and openai backends' alike:
	// "action" (default: one BrowserGym action line) or "target" (an
	// action on an element after a comment line naming the element by
	// its role and text, which decides the bid: lm.AnswerTarget).
	Answer string
	// FrozenStates has the actors keep each sampled step's hidden states
	// after the blocks the learner does not train, in <run-dir>/lm-frozen
	// (named on the action), so that the learner runs the trained blocks
	// alone on a sample's first draw too (default true).
	FrozenStates bool
	// Temperature is the actors' sampling temperature (default 1: the
	// model's own distribution). Above 1 the samples of one page differ
	// more: SmolLM2's four samples of a seed agreed in 71% of 12-07's GRPO
	// groups, and a group with equal returns teaches nothing. The
	// learner scores each step at the temperature it recorded; greedy
	// steps (evaluation) ignore it.
	Temperature float64
}

// FrozenDir is where the actors keep the frozen blocks' states
// (FrozenStates) and the learner reads them.
func FrozenDir(runDir string) string { return filepath.Join(runDir, "lm-frozen") }

func (l *LM) register(fs *flag.FlagSet) {
	fs.StringVar(&l.Model, "lm-model", "", "lm backend: the model's GGUF file (llama architecture, byte-level BPE, ChatML); empty = <run-dir>/lm/SmolLM2-135M-Instruct.Q4_1.gguf from infra/setup.sh lm (env "+envName("lm-model")+")")
	fs.IntVar(&l.MaxTokens, "lm-max-tokens", 96, "lm backend: longest answer in tokens (env "+envName("lm-max-tokens")+")")
	fs.IntVar(&l.Threads, "lm-threads", 1, "lm backend: ONNX Runtime threads per decision (env "+envName("lm-threads")+")")
	fs.Float64Var(&l.LR, "lm-lr", 3e-5, "lm backend: the learner's Adam learning rate on the trained blocks (-lr is the features network's) (env "+envName("lm-lr")+")")
	fs.Float64Var(&l.KL, "lm-kl", 0, "lm backend: weight of GRPO's penalty on the divergence of the answers' log-probs from the base model's (DeepSeekMath's β; a reference pass of the trained blocks per sample, once); 0 = off (env "+envName("lm-kl")+")")
	fs.IntVar(&l.FrozenCacheMB, "lm-frozen-cache-mb", 1024, "lm backend: MiB of the frozen blocks' outputs the learner keeps per sample for its next draw, which then costs the trained blocks alone; 0 = off (env "+envName("lm-frozen-cache-mb")+")")
	fs.BoolVar(&l.FrozenStates, "lm-frozen-states", true, "lm backend: actors keep each sampled step's hidden states after the untrained blocks in <run-dir>/lm-frozen for the learner, which then runs the trained blocks alone (~0.3 MB a step on disk) (env "+envName("lm-frozen-states")+")")
	fs.StringVar(&l.Answer, "lm-answer", "action", "lm and openai backends: the answers' form: action (one BrowserGym action line) or target (an action on an element after a comment line naming it, # role \"text\" [id], which decides the id: a small model picks an element by its words) (env "+envName("lm-answer")+")")
	fs.Float64Var(&l.Temperature, "lm-temperature", 1, "lm backend: the actors' sampling temperature; above 1 a page's samples differ more, so fewer GRPO groups have equal returns (the learner trains the tempered policy; evaluation is greedy) (env "+envName("lm-temperature")+")")
	fs.IntVar(&l.TrainBlocks, "lm-train-blocks", 2, "lm backend: the model's top blocks the learner trains (GRPO); a version carries those alone (env "+envName("lm-train-blocks")+")")
}

// OpenAI is the model server of the openai policy backend: any server with
// an OpenAI-compatible chat API (vLLM, SGLang, llama.cpp's server).
type OpenAI struct {
	// BaseURL is the server, e.g. http://127.0.0.1:8000 ("/v1" is added).
	BaseURL string
	// Model is the served model's name.
	Model string
	// APIKey is the bearer token; from the environment
	// (ASYNCWEBRL_OPENAI_API_KEY or OPENAI_API_KEY) rather than the
	// command line, and never printed.
	APIKey Secret
	// Timeout bounds one request (default 60s); Retries is how many times
	// a timed-out or refused (429, 5xx) request is sent again (default 2).
	Timeout time.Duration
	Retries int
	// MaxTokens bounds one reply (default 96, as -lm-max-tokens).
	MaxTokens int
	// Grammar sends each page's action grammar (GBNF, llama.cpp's
	// "grammar" field) so the server can only answer with an action the
	// page can take (default on; servers without it ignore the field).
	Grammar bool

	key string
}

func (o *OpenAI) register(fs *flag.FlagSet) {
	fs.StringVar(&o.BaseURL, "openai-base-url", "", "openai backend: the model server's URL, e.g. http://127.0.0.1:8000 (/v1 is added) (env "+envName("openai-base-url")+")")
	fs.StringVar(&o.Model, "openai-model", "", "openai backend: the served model's name (env "+envName("openai-model")+")")
	fs.StringVar(&o.key, "openai-api-key", "", "openai backend: API key, sent as a bearer token (prefer the environment: "+envName("openai-api-key")+" or OPENAI_API_KEY)")
	fs.DurationVar(&o.Timeout, "openai-timeout", 60*time.Second, "openai backend: bound of one request (env "+envName("openai-timeout")+")")
	fs.IntVar(&o.Retries, "openai-retries", 2, "openai backend: times a timed-out or refused (429, 5xx) request is sent again (env "+envName("openai-retries")+")")
	fs.BoolVar(&o.Grammar, "openai-grammar", true, "openai backend: send each page's action grammar (GBNF, llama.cpp's grammar field), so the model can only answer with an action the page can take; false: it answers freely and an invalid reply runs as a noop (env "+envName("openai-grammar")+")")
	fs.IntVar(&o.MaxTokens, "openai-max-tokens", 96, "openai backend: longest reply in tokens (env "+envName("openai-max-tokens")+")")
}

// validate checks the server's settings when the backend is used.
func (o *OpenAI) validate(backend string) error {
	if o.key != "" {
		o.APIKey = Secret(o.key)
	}
	if backend != "openai" {
		return nil
	}
	if o.BaseURL == "" || o.Model == "" {
		return errors.New("invalid -policy-backend openai: it needs -openai-base-url and -openai-model")
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("invalid -openai-base-url: want http(s)://host[:port][/path]")
	}
	if u.User != nil {
		return errors.New("invalid -openai-base-url: credentials go in the API key (the environment), not the URL")
	}
	switch {
	case o.Timeout <= 0:
		return fmt.Errorf("invalid -openai-timeout %s: must be positive", o.Timeout)
	case o.Retries < 0 || o.Retries > 10:
		return fmt.Errorf("invalid -openai-retries %d: want 0..10", o.Retries)
	case o.MaxTokens < 1 || o.MaxTokens > 4096:
		return fmt.Errorf("invalid -openai-max-tokens %d: want 1..4096", o.MaxTokens)
	}
	return nil
}

// validateBackend checks -policy-backend.
func (c *Config) validateBackend() error {
	c.PolicyBackend = strings.ToLower(strings.TrimSpace(c.PolicyBackend))
	if c.PolicyBackend == "" {
		c.PolicyBackend = "features"
	}
	if err := oneOf("-policy-backend", c.PolicyBackend, PolicyBackends...); err != nil {
		return err
	}
	if c.LM.Model == "" {
		c.LM.Model = filepath.Join(c.RunDir, "lm", "SmolLM2-135M-Instruct.Q4_1.gguf")
	}
	switch {
	case c.LM.MaxTokens < 1 || c.LM.MaxTokens > 1024:
		return fmt.Errorf("invalid -lm-max-tokens %d: want 1..1024", c.LM.MaxTokens)
	case c.LM.Threads < 1 || c.LM.Threads > 64:
		return fmt.Errorf("invalid -lm-threads %d: want 1..64", c.LM.Threads)
	case c.LM.TrainBlocks < 1 || c.LM.TrainBlocks > 1024:
		return fmt.Errorf("invalid -lm-train-blocks %d: want 1 or more", c.LM.TrainBlocks)
	case !(c.LM.LR > 0 && c.LM.LR < 1):
		return fmt.Errorf("invalid -lm-lr %v: want a rate in (0, 1)", c.LM.LR)
	case !(c.LM.KL >= 0 && c.LM.KL < 100):
		return fmt.Errorf("invalid -lm-kl %v: want 0 (off) or a weight below 100", c.LM.KL)
	case !(c.LM.Temperature >= 0.05 && c.LM.Temperature <= 10):
		return fmt.Errorf("invalid -lm-temperature %v: want 0.05..10", c.LM.Temperature)
	case c.LM.FrozenCacheMB < 0:
		return fmt.Errorf("invalid -lm-frozen-cache-mb %d: want 0 (off) or more", c.LM.FrozenCacheMB)
	}
	a, err := lm.ParseAnswer(c.LM.Answer)
	if err != nil {
		return fmt.Errorf("invalid -lm-answer: %w", err)
	}
	c.LM.Answer = string(a)
	return c.OpenAI.validate(c.PolicyBackend)
}
