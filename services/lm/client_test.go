package lm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const secretKey = "sk-test-0123456789abcdef"

// reply is a llama.cpp-style chat completion of text with a log-prob and
// an id per token (one token per byte).
func reply(text string) string {
	type lp struct {
		ID      int32   `json:"id"`
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
	}
	var toks []lp
	for i, c := range text {
		toks = append(toks, lp{ID: int32(c), Token: string(c), Logprob: -0.5 * float64(i%2)})
	}
	b, _ := json.Marshal(map[string]any{
		"choices": []any{map[string]any{
			"message":       map[string]any{"role": "assistant", "content": text},
			"finish_reason": "stop",
			"logprobs":      map[string]any{"content": toks},
		}},
		"usage": map[string]any{"prompt_tokens": 321, "completion_tokens": len(toks)},
	})
	return string(b)
}

func newTestClient(t *testing.T, h http.HandlerFunc, mod func(*Config)) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := Config{BaseURL: srv.URL, Model: "smollm2", APIKey: secretKey, Timeout: 2 * time.Second, Retries: 2}
	if mod != nil {
		mod(&c)
	}
	cl, err := NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

var msgs = []Message{{Role: "system", Content: "act"}, {Role: "user", Content: "Goal: click"}}

// TestCompleteRequest: the request a server gets (path, key, model, the
// untruncated sampling and the log-probs asked for) and the reply's
// tokens, ids and log-prob read back.
func TestCompleteRequest(t *testing.T) {
	var got map[string]any
	cl := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+secretKey {
			http.Error(w, "wrong path or key", http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &got)
		io.WriteString(w, reply(`click("5")`))
	}, nil)
	for _, greedy := range []bool{false, true} {
		c, err := cl.Complete(context.Background(), msgs, greedy, "root ::= \"noop()\"")
		if err != nil {
			t.Fatal(err)
		}
		if c.Text != `click("5")` || len(c.Tokens) != 10 || c.Tokens[0].ID != 'c' || c.PromptTokens != 321 || c.FinishReason != "stop" || c.Attempts != 1 {
			t.Fatalf("completion %+v", c)
		}
		if c.Logprob() != -2.5 {
			t.Errorf("log-prob %v, want -2.5", c.Logprob())
		}
		wantTemp := 1.0
		if greedy {
			wantTemp = 0
		}
		if got["grammar"] != "root ::= \"noop()\"" {
			t.Errorf("grammar %v", got["grammar"])
		}
		if got["model"] != "smollm2" || got["logprobs"] != true || got["temperature"] != wantTemp || got["top_p"] != 1.0 || got["top_k"] != 0.0 || got["min_p"] != 0.0 {
			t.Errorf("request %v", got)
		}
	}
}

// TestCompleteVLLMTokenIDs: vLLM's return_token_ids give the ids.
func TestCompleteVLLMTokenIDs(t *testing.T) {
	cl := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"choices":[{"message":{"content":"noop()"},"finish_reason":"stop","token_ids":[7,8],`+
			`"logprobs":{"content":[{"token":"noop","logprob":-0.1},{"token":"()","logprob":-0.2}]}}]}`)
	}, nil)
	c, err := cl.Complete(context.Background(), msgs, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Tokens[0].ID != 7 || c.Tokens[1].ID != 8 || c.Tokens[1].Text != "()" {
		t.Fatalf("tokens %+v", c.Tokens)
	}
}

// TestCompleteFailures: a server that refuses, garbles, leaves out the
// log-probs or does not answer gives a *ServerError with its reason,
// retried only when retrying can help, and the key in none of it.
func TestCompleteFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		handler  func(w http.ResponseWriter, n int32)
		attempts int32
		status   int
		reason   string
	}{
		{"refused 401", func(w http.ResponseWriter, _ int32) {
			http.Error(w, `{"error":{"message":"bad key `+secretKey+`"}}`, http.StatusUnauthorized)
		}, 1, 401, "refused: bad key [redacted]"},
		{"overloaded then fine", func(w http.ResponseWriter, n int32) {
			if n < 3 {
				http.Error(w, `{"error":"busy"}`, http.StatusServiceUnavailable)
				return
			}
			io.WriteString(w, reply("noop()"))
		}, 3, 0, ""},
		{"always 503", func(w http.ResponseWriter, _ int32) { http.Error(w, "busy", http.StatusServiceUnavailable) }, 3, 503, "refused: busy"},
		{"garbage", func(w http.ResponseWriter, _ int32) { io.WriteString(w, "\x00\x01 not json") }, 1, 200, "malformed reply: not a chat completion"},
		{"no choices", func(w http.ResponseWriter, _ int32) { io.WriteString(w, `{"choices":[]}`) }, 1, 200, "malformed reply: no choices"},
		{"no log-probs", func(w http.ResponseWriter, _ int32) {
			io.WriteString(w, `{"choices":[{"message":{"content":"click(\"5\")"}}]}`)
		}, 1, 200, "malformed reply: no token log-probs"},
		{"positive log-prob", func(w http.ResponseWriter, _ int32) {
			io.WriteString(w, `{"choices":[{"message":{"content":"x"},"logprobs":{"content":[{"token":"x","logprob":0.5}]}}]}`)
		}, 1, 200, "has no valid log-prob"},
		{"ids do not match", func(w http.ResponseWriter, _ int32) {
			io.WriteString(w, `{"choices":[{"message":{"content":"x"},"token_ids":[1,2],"logprobs":{"content":[{"token":"x","logprob":-1}]}}]}`)
		}, 1, 200, "2 token ids for 1 log-probs"},
		{"timeout", func(w http.ResponseWriter, _ int32) {
			time.Sleep(700 * time.Millisecond)
			io.WriteString(w, reply("noop()"))
		}, 3, 0, "no reply within 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			cl := newTestClient(t, func(w http.ResponseWriter, r *http.Request) { tc.handler(w, n.Add(1)) },
				func(c *Config) { c.Timeout = 200 * time.Millisecond })
			c, err := cl.Complete(context.Background(), msgs, true, "")
			if got := n.Load(); got != tc.attempts {
				t.Errorf("%d requests, want %d", got, tc.attempts)
			}
			if tc.reason == "" {
				if err != nil || c.Attempts != int(tc.attempts) {
					t.Fatalf("err %v, completion %+v", err, c)
				}
				return
			}
			var se *ServerError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want *ServerError", err, err)
			}
			if se.Status != tc.status || !strings.Contains(se.Error(), tc.reason) || se.Attempts != int(tc.attempts) {
				t.Errorf("error %+v (%q)", se, se.Error())
			}
			if strings.Contains(se.Error(), secretKey) || strings.Contains(string(se.Body), secretKey) {
				t.Errorf("the key is in the error: %q / %q", se.Error(), se.Body)
			}
		})
	}
}

// TestCompleteCancelled: a cancelled context ends the retries with the
// context's error, not a server error.
func TestCompleteCancelled(t *testing.T) {
	cl := newTestClient(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) }, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := cl.Complete(ctx, msgs, false, ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// TestNewClient: bad URLs and missing names are refused, the key never
// in the message; "/v1" is added once.
func TestNewClient(t *testing.T) {
	for _, c := range []Config{
		{BaseURL: "ftp://x", Model: "m"},
		{BaseURL: "http://user:" + secretKey + "@host", Model: "m"},
		{BaseURL: "http://host", Model: ""},
		{BaseURL: "http://host", Model: "m", Retries: -1},
	} {
		if _, err := NewClient(c); err == nil || strings.Contains(err.Error(), secretKey) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	for base, want := range map[string]string{"http://h:8/": "http://h:8/v1/chat/completions", "http://h:8/v1": "http://h:8/v1/chat/completions", "https://h/api": "https://h/api/v1/chat/completions"} {
		c, err := NewClient(Config{BaseURL: base, Model: "m"})
		if err != nil || c.endpoint != want {
			t.Errorf("%s: %v %v, want %s", base, c, err, want)
		}
	}
}
