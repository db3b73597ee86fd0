package lm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Config is a model server's connection and the generation's bounds.
type Config struct {
	// BaseURL is the server, e.g. http://127.0.0.1:8000; "/v1" is added
	// unless it ends with it.
	BaseURL string
	// Model is the served model's name (the request's "model").
	Model string
	// APIKey is sent as "Authorization: Bearer"; empty sends none. It is
	// never part of an error, a log line or an event.
	APIKey string
	// Timeout bounds one request (default 60s: a CPU server's first
	// request loads the model).
	Timeout time.Duration
	// Retries is how many times a request that timed out, could not
	// connect, or got 429 or 5xx is sent again (default 2), after
	// 250ms, 500ms, ...
	Retries int
	// MaxTokens bounds a reply (default 48: one action).
	MaxTokens int
	// HTTP is the client (default: one of its own).
	HTTP *http.Client
}

// Client asks an OpenAI-compatible server for one action at a time.
type Client struct {
	c        Config
	endpoint string
}

// NewClient checks c and builds its client.
func NewClient(c Config) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(c.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid model server URL %q: want http(s)://host[:port][/path]", redactURL(c.BaseURL))
	}
	if u.User != nil {
		return nil, errors.New("invalid model server URL: credentials go in the API key, not the URL")
	}
	if c.Model == "" {
		return nil, errors.New("no model name for the model server")
	}
	if c.Timeout <= 0 {
		c.Timeout = 60 * time.Second
	}
	if c.Retries < 0 {
		return nil, fmt.Errorf("invalid retries %d: want 0 or more", c.Retries)
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = 48
	}
	if c.HTTP == nil {
		c.HTTP = &http.Client{}
	}
	ep := u.String()
	if !strings.HasSuffix(ep, "/v1") {
		ep += "/v1"
	}
	return &Client{c: c, endpoint: ep + "/chat/completions"}, nil
}

// Model is the served model's name.
func (c *Client) Model() string { return c.c.Model }

// Token is one generated token: its id (-1 when the server does not say),
// its text and its log-prob under the serving policy.
type Token struct {
	ID      int32
	Text    string
	Logprob float64
}

// Completion is one reply.
type Completion struct {
	Text         string
	Tokens       []Token
	FinishReason string
	// PromptTokens and CompletionTokens are the server's usage counts (0
	// when it gives none).
	PromptTokens, CompletionTokens int
	// Attempts is how many requests it took; Latency the last one's time.
	Attempts int
	Latency  time.Duration
}

// Logprob is the reply's log-prob: the sum over its tokens.
func (c *Completion) Logprob() float64 {
	s := 0.0
	for _, t := range c.Tokens {
		s += t.Logprob
	}
	return s
}

// ServerError is a request the server refused or answered with something
// that is not a usable reply.
type ServerError struct {
	// Status is the HTTP status (0: no reply: a timeout, a refused
	// connection).
	Status int
	// Reason says what went wrong.
	Reason string
	// Body is the reply's first bytes, for the dead letter.
	Body []byte
	// Attempts is how many requests were sent.
	Attempts int
	// Retryable: a timeout, a connection error, 429 or 5xx.
	Retryable bool
}

func (e *ServerError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("model server replied %d after %d attempt(s): %s", e.Status, e.Attempts, e.Reason)
	}
	return fmt.Sprintf("model server: %s after %d attempt(s)", e.Reason, e.Attempts)
}

// maxBody bounds the reply read; maxErrBody the part an error keeps.
const (
	maxBody    = 4 << 20
	maxErrBody = 2 << 10
)

// Complete asks for the reply to msgs: sampled at temperature 1 without
// truncation (top_p 1, top_k 0, min_p 0: a truncated distribution's
// log-probs are not the policy's), or greedy at temperature 0; with a
// GBNF grammar (Grammar) when grammar is not empty, in llama.cpp's
// "grammar" field. It retries what Config.Retries says and returns a
// *ServerError when it gives up.
func (c *Client) Complete(ctx context.Context, msgs []Message, greedy bool, grammar string) (*Completion, error) {
	temp := 1.0
	if greedy {
		temp = 0
	}
	body, err := json.Marshal(chatRequest{
		Model: c.c.Model, Messages: msgs, MaxTokens: c.c.MaxTokens, Temperature: temp,
		TopP: 1, TopK: 0, MinP: 0, Logprobs: true, ReturnTokenIDs: true, Stream: false, N: 1, Grammar: grammar,
	})
	if err != nil {
		return nil, fmt.Errorf("unable to encode the chat request: %w", err)
	}
	var last *ServerError
	for attempt := 1; attempt <= c.c.Retries+1; attempt++ {
		if attempt > 1 {
			t := time.NewTimer(time.Duration(250<<(attempt-2)) * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
		}
		comp, serr := c.once(ctx, body)
		if serr == nil {
			comp.Attempts = attempt
			return comp, nil
		}
		serr.Attempts = attempt
		last = serr
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !serr.Retryable {
			break
		}
	}
	return nil, last
}

// once sends one request.
func (c *Client) once(ctx context.Context, body []byte) (*Completion, *ServerError) {
	rctx, cancel := context.WithTimeout(ctx, c.c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &ServerError{Reason: "unable to build the request: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	if c.c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.c.APIKey)
	}
	t0 := time.Now()
	resp, err := c.c.HTTP.Do(req)
	if err != nil {
		reason := "no reply"
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			reason = fmt.Sprintf("no reply within %s", c.c.Timeout)
		} else if ue := (*url.Error)(nil); errors.As(err, &ue) {
			reason = "no reply: " + c.redact(ue.Err.Error())
		}
		return nil, &ServerError{Reason: reason, Retryable: true}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, &ServerError{Status: resp.StatusCode, Reason: "unable to read the reply: " + c.redact(err.Error()), Retryable: true}
	}
	if len(raw) > maxBody {
		return nil, &ServerError{Status: resp.StatusCode, Reason: fmt.Sprintf("reply over %d bytes", maxBody), Body: c.clip(raw)}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &ServerError{Status: resp.StatusCode, Reason: "refused: " + c.redact(errorMessage(raw)), Body: c.clip(raw),
			Retryable: resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500}
	}
	comp, err := decodeReply(raw)
	if err != nil {
		return nil, &ServerError{Status: resp.StatusCode, Reason: "malformed reply: " + c.redact(err.Error()), Body: c.clip(raw)}
	}
	comp.Latency = time.Since(t0)
	return comp, nil
}

// redact removes the API key from text a server or a transport wrote.
func (c *Client) redact(s string) string {
	if c.c.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.c.APIKey, "[redacted]")
}

func (c *Client) clip(b []byte) []byte {
	if len(b) > maxErrBody {
		b = b[:maxErrBody]
	}
	return []byte(c.redact(string(b)))
}

// redactURL drops a URL's user info for an error message.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User("[redacted]")
		return u.String()
	}
	return s
}

// chatRequest is the request body. top_k, min_p and return_token_ids are
// not OpenAI's: vLLM, SGLang and llama.cpp read them, and OpenAI-compatible
// servers ignore fields they do not know.
type chatRequest struct {
	Model          string    `json:"model"`
	Messages       []Message `json:"messages"`
	MaxTokens      int       `json:"max_tokens"`
	Temperature    float64   `json:"temperature"`
	TopP           float64   `json:"top_p"`
	TopK           int       `json:"top_k"`
	MinP           float64   `json:"min_p"`
	Logprobs       bool      `json:"logprobs"`
	ReturnTokenIDs bool      `json:"return_token_ids"`
	Stream         bool      `json:"stream"`
	N              int       `json:"n"`
	Grammar        string    `json:"grammar,omitempty"`
}

// chatReply is the part of a chat completion read.
type chatReply struct {
	Choices []struct {
		Message *struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
		Logprobs     *struct {
			Content []struct {
				ID      *int32   `json:"id"`
				Token   string   `json:"token"`
				Logprob *float64 `json:"logprob"`
			} `json:"content"`
		} `json:"logprobs"`
		// vLLM's return_token_ids.
		TokenIDs []int32 `json:"token_ids"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// decodeReply reads a chat completion; a reply without its message or its
// tokens' log-probs is an error (a policy's action without its log-prob is
// no training data).
func decodeReply(raw []byte) (*Completion, error) {
	var r chatReply
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("not a chat completion: %w", err)
	}
	if len(r.Choices) == 0 {
		return nil, errors.New("no choices")
	}
	ch := r.Choices[0]
	if ch.Message == nil || ch.Message.Content == nil {
		return nil, errors.New("no message content")
	}
	if ch.Logprobs == nil || len(ch.Logprobs.Content) == 0 {
		if *ch.Message.Content == "" {
			// An empty reply (the model stopped at once) has no tokens.
			return &Completion{FinishReason: ch.FinishReason}, nil
		}
		return nil, errors.New("no token log-probs (the server must support logprobs)")
	}
	c := &Completion{Text: *ch.Message.Content, FinishReason: ch.FinishReason, Tokens: make([]Token, len(ch.Logprobs.Content))}
	ids := ch.TokenIDs
	if len(ids) != 0 && len(ids) != len(ch.Logprobs.Content) {
		return nil, fmt.Errorf("%d token ids for %d log-probs", len(ids), len(ch.Logprobs.Content))
	}
	for i, t := range ch.Logprobs.Content {
		if t.Logprob == nil || math.IsNaN(*t.Logprob) || *t.Logprob > 0 {
			return nil, fmt.Errorf("token %d (%q) has no valid log-prob", i, t.Token)
		}
		tok := Token{ID: -1, Text: t.Token, Logprob: *t.Logprob}
		switch {
		case len(ids) != 0:
			tok.ID = ids[i]
		case t.ID != nil:
			tok.ID = *t.ID
		}
		// -inf (a token the server's own sampling could not have drawn)
		// is kept finite for the event, which holds finite numbers only.
		tok.Logprob = max(tok.Logprob, -1e4)
		c.Tokens[i] = tok
	}
	if r.Usage != nil {
		c.PromptTokens, c.CompletionTokens = r.Usage.PromptTokens, r.Usage.CompletionTokens
	}
	return c, nil
}

// errorMessage is an error reply's message ({"error": {"message": ...}}
// or {"error": "..."}), or its first bytes.
func errorMessage(raw []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && len(e.Error) > 0 {
		var m struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &m) == nil && m.Message != "" {
			return clipString(m.Message, 300)
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return clipString(s, 300)
		}
	}
	return clipString(strings.TrimSpace(string(raw)), 300)
}

func clipString(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
