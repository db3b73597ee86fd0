package actor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
)

const testAPIKey = "sk-integration-5f1d2c9e"

// flakyModelServer is an OpenAI-compatible server whose replies cycle
// through what a real one can do wrong: a valid action (clicking the
// page's first button), a reply naming no action, a body that is not
// JSON, a refusal (503), and no reply in time. It checks the bearer key.
type flakyModelServer struct {
	n     atomic.Int64
	hold  time.Duration
	valid atomic.Int64
}

var firstButton = regexp.MustCompile(`\[(\S+)\] button`)

func (f *flakyModelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+testAPIKey {
		http.Error(w, `{"error":{"message":"wrong key"}}`, http.StatusUnauthorized)
		return
	}
	var req struct {
		Messages []lm.Message `json:"messages"`
		Logprobs bool         `json:"logprobs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) != 2 || !req.Logprobs {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	switch f.n.Add(1) % 5 {
	case 1:
		bid := "nothing"
		if m := firstButton.FindStringSubmatch(req.Messages[1].Content); m != nil {
			bid = m[1]
		}
		f.valid.Add(1)
		io.WriteString(w, completion(fmt.Sprintf("click(%q)", bid)))
	case 2:
		io.WriteString(w, completion("I would press the submit button now."))
	case 3:
		io.WriteString(w, "<html>502 bad gateway</html>")
	case 4:
		http.Error(w, `{"error":{"message":"model overloaded"}}`, http.StatusServiceUnavailable)
	case 0:
		select {
		case <-time.After(f.hold):
		case <-r.Context().Done():
		}
		io.WriteString(w, completion("noop()"))
	}
}

// completion is a chat completion of text, one token per 3 bytes.
func completion(text string) string {
	type tok struct {
		ID      int32   `json:"id"`
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
	}
	var toks []tok
	for i := 0; i < len(text); i += 3 {
		toks = append(toks, tok{ID: int32(i), Token: text[i:min(i+3, len(text))], Logprob: -0.25})
	}
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{
		"message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop",
		"logprobs": map[string]any{"content": toks}}}, "usage": map[string]any{"prompt_tokens": 400}})
	return string(b)
}

// lockedBuffer is a log sink for several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestIntegrationOpenAIBackend: a model behind an OpenAI-compatible server
// acts in real Chromium through the Policy seam, and every way its server
// can fail is recorded, not crashed on:
//   - a valid reply is the action, with the reply's tokens and log-probs on
//     the event (log_prob their sum);
//   - a reply naming no action is a noop flagged invalid, and a dead letter;
//   - garbage, a refusal and a timeout abort the step's episode, each with
//     a dead letter giving the reason;
//   - the API key is in no event, dead letter or log line.
func TestIntegrationOpenAIBackend(t *testing.T) {
	srv := startWebenv(t, "none")
	k := newKafkaEnv(t, srv.URL())
	fake := &flakyModelServer{hold: 3 * time.Second}
	ms := httptest.NewServer(fake)
	defer ms.Close()
	cl, err := lm.NewClient(lm.Config{BaseURL: ms.URL, Model: "flaky", APIKey: testAPIKey, Timeout: time.Second, Retries: 0})
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := NewOpenAIPolicy(cl, action.SetBid, lm.PromptOptions{}, false, log)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev := &events{}
	k.consume(t, ctx, ev)
	a, err := New(k.cfg, k.factory, k.catalog, WithLogger(log), WithExecutors(2), WithBrowsers(1), WithMaxSteps(3),
		WithFamilies("click-button"), WithPolicy(func([]byte, uint64) (Policy, error) { return p, nil }))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 4*time.Minute, "20 model requests", func() bool { return fake.n.Load() >= 20 })
	sctx, scancel := context.WithTimeout(context.Background(), time.Minute)
	defer scancel()
	if err := a.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, time.Minute, "the dead letters", func() bool {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		return len(ev.dlq) >= int(a.Stats().DeadLetters)
	})
	cancel()

	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.bad) > 0 {
		t.Fatalf("undecodable or mis-keyed events: %v", ev.bad)
	}
	var valid, invalid int
	for _, act := range ev.actions {
		g := act.GetLm()
		if g == nil {
			if act.GetEnvelope().GetSource() == eventspb.Source_SOURCE_POLICY {
				t.Errorf("policy action without its generation: %v", act)
			}
			continue
		}
		if g.GetBackend() != BackendOpenAI || g.GetModel() != "flaky" || len(g.GetTokens()) == 0 ||
			len(g.GetTokens()) != len(g.GetTokenLogprobs()) || len(g.GetTokenIds()) != len(g.GetTokens()) || g.GetPromptTokens() != 400 {
			t.Errorf("generation %v", g)
		}
		sum := 0.0
		for _, lp := range g.GetTokenLogprobs() {
			sum += float64(lp)
		}
		if d := act.GetLogProb() - sum; d > 1e-4 || d < -1e-4 {
			t.Errorf("log_prob %v, tokens sum to %v", act.GetLogProb(), sum)
		}
		switch {
		case g.GetInvalid():
			invalid++
			if act.GetType() != eventspb.ActionType_ACTION_TYPE_NOOP || !strings.Contains(g.GetInvalidReason(), "no action in") {
				t.Errorf("invalid reply's action %v (%s)", act.GetType(), g.GetInvalidReason())
			}
		default:
			valid++
			if act.GetType() != eventspb.ActionType_ACTION_TYPE_CLICK {
				t.Errorf("valid reply's action %v", act)
			}
		}
	}
	reasons := map[string]int{}
	for _, d := range ev.dlq {
		if d.GetReasonCode() != eventspb.ReasonCode_REASON_CODE_MODEL_REPLY || d.GetComponent() != "actor" || d.GetEnvelope().GetEpisodeId() == "" {
			t.Errorf("dead letter %v", d)
		}
		for _, r := range []string{"invalid model reply", "malformed reply", "replied 503", "no reply within"} {
			if strings.Contains(d.GetReason(), r) {
				reasons[r]++
			}
		}
	}
	aborted := 0
	for _, r := range ev.rewards {
		if r.GetAborted() {
			aborted++
		}
	}
	t.Logf("%d requests: %d valid and %d invalid actions recorded, dead letters %v, %d aborted episodes, %d episodes",
		fake.n.Load(), valid, invalid, reasons, aborted, a.Stats().Episodes)
	if valid == 0 || invalid == 0 {
		t.Errorf("valid %d, invalid %d actions: want both", valid, invalid)
	}
	for _, r := range []string{"invalid model reply", "malformed reply", "replied 503", "no reply within"} {
		if reasons[r] == 0 {
			t.Errorf("no dead letter for %q: %v", r, reasons)
		}
	}
	if aborted == 0 {
		t.Error("no episode aborted by a failed model request")
	}
	if st := a.Stats(); st.LMInvalid != uint64(invalid) || st.DeadLetters != uint64(len(ev.dlq)) {
		t.Errorf("stats: invalid %d, dead letters %d; recorded %d, %d", st.LMInvalid, st.DeadLetters, invalid, len(ev.dlq))
	}
	for _, m := range append(append([]proto.Message{}, protoList(ev.actions)...), protoList(ev.dlq)...) {
		b, _ := proto.Marshal(m)
		if bytes.Contains(b, []byte(testAPIKey)) {
			t.Fatalf("the API key is in an event: %v", m)
		}
	}
	if strings.Contains(logs.String(), testAPIKey) {
		t.Fatal("the API key is in the logs")
	}
}

func protoList[M proto.Message](ms []M) []proto.Message {
	out := make([]proto.Message, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}
