package actor

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
)

// TestOpenAIPolicyDecide: the openai backend's decisions without a browser:
// a valid reply is its action with the generation, one naming no action is
// a flagged noop with its dead letter, a refusal is a failed step carrying
// the dead letter, and published weights change nothing.
func TestOpenAIPolicyDecide(t *testing.T) {
	replies := map[string]func(w http.ResponseWriter){
		"valid":   func(w http.ResponseWriter) { io.WriteString(w, completion(`Action: click("b7")`)) },
		"foreign": func(w http.ResponseWriter) { io.WriteString(w, completion(`click("b99")`)) },
		"refused": func(w http.ResponseWriter) { http.Error(w, `{"error":"no"}`, http.StatusForbidden) },
	}
	var mode string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { replies[mode](w) }))
	defer srv.Close()
	cl, err := lm.NewClient(lm.Config{BaseURL: srv.URL, Model: "m", Timeout: time.Second, Retries: 0})
	if err != nil {
		t.Fatal(err)
	}
	p := NewOpenAIPolicy(cl, action.SetBid, lm.PromptOptions{}, false, nil)
	obs := &eventspb.Observation{Envelope: &eventspb.Envelope{EpisodeId: "ep-1", Step: 2}, Instruction: "Click OK.",
		Elements: []*eventspb.Element{{Bid: "b7", Role: "button", Text: "OK"}}}
	in, err := p.Prepare(obs)
	if err != nil {
		t.Fatal(err)
	}

	mode = "valid"
	d, err := p.Decide(context.Background(), in, Query{})
	if err != nil {
		t.Fatal(err)
	}
	a := d.Action
	if a.GetType() != eventspb.ActionType_ACTION_TYPE_CLICK || a.GetBid() != "b7" || a.GetRaw() != `click("b7")` || d.DeadLetter != nil {
		t.Fatalf("valid reply: %v, dead letter %v", a, d.DeadLetter)
	}
	if g := a.GetLm(); g.GetBackend() != BackendOpenAI || g.GetInvalid() || len(g.GetTokens()) != len(g.GetTokenLogprobs()) || a.GetLogProb() >= 0 {
		t.Errorf("generation %v, log-prob %v", g, a.GetLogProb())
	}
	env := eventspb.NewEnvelope("x")
	env.EpisodeId = "ep-1"
	if err := eventspb.Validate(&eventspb.Action{Envelope: env, Type: a.GetType(), Bid: a.GetBid(), Lm: a.GetLm(), LogProb: a.GetLogProb()}); err != nil {
		t.Errorf("the action does not validate: %v", err)
	}

	mode = "foreign"
	if d, err = p.Decide(context.Background(), in, Query{}); err != nil {
		t.Fatal(err)
	}
	if d.Action.GetType() != eventspb.ActionType_ACTION_TYPE_NOOP || !d.Action.GetLm().GetInvalid() ||
		!strings.Contains(d.Action.GetLm().GetInvalidReason(), `bid "b99"`) {
		t.Errorf("foreign bid: %v", d.Action)
	}
	if dl := d.DeadLetter; dl == nil || dl.GetReasonCode() != eventspb.ReasonCode_REASON_CODE_MODEL_REPLY || string(dl.GetPayload()) != `click("b99")` ||
		!strings.HasPrefix(dl.GetReason(), "step 2: ") || string(dl.GetSourceKey()) != "ep-1" {
		t.Errorf("foreign bid's dead letter %v", dl)
	}

	mode = "refused"
	_, err = p.Decide(context.Background(), in, Query{})
	var dle *deadLetterError
	var se *stageError
	if !errors.As(err, &dle) || !errors.As(err, &se) || se.stage != "model server" || !strings.Contains(dle.dl.GetReason(), "replied 403") {
		t.Fatalf("refusal: %v", err)
	}

	if err := p.Swap(context.Background(), []byte("onnx"), 9); err != nil || p.Version() != 0 {
		t.Errorf("swap: %v, version %d", err, p.Version())
	}
	if _, err := p.Decide(context.Background(), "not a prompt", Query{}); !errors.Is(err, errForeignInput) {
		t.Errorf("foreign input: %v", err)
	}
}
