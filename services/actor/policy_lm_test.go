package actor

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
	"github.com/asyncwebrl/asyncwebrl/services/lm/tokenizer"
)

// testLM is a random llama over a byte vocabulary with ChatML's markers,
// on ONNX Runtime.
func testLM(t *testing.T) LMModel {
	t.Helper()
	tok, err := tokenizer.New(tokenizer.ByteVocab("<|im_start|>", "<|im_end|>"))
	if err != nil {
		t.Fatal(err)
	}
	m := llama.Random(testLMShape(tok.Len()), 5)
	sess, err := llama.NewSession(m.ONNX(), m.Shape, 1)
	if err != nil {
		t.Fatal(err)
	}
	eos, _ := tok.ID("<|im_end|>")
	return LMModel{Model: m, Session: sess, Tokenizer: tok, Name: "random", EOS: eos, Threads: 1}
}

func testLMShape(vocab int) gguf.Llama {
	return gguf.Llama{Blocks: 2, Width: 32, FeedForward: 64, Heads: 4, KVHeads: 2, RopeDims: 8, Context: 4096,
		Vocab: vocab, RopeBase: 10000, NormEps: 1e-5}
}

// TestLMPolicySwap: a published version (the top block's tensors) is
// served from the next decision, stamped with its version; a blob that is
// no version is refused and the serving version stays.
func TestLMPolicySwap(t *testing.T) {
	m := testLM(t)
	p, err := NewLMPolicy(m, action.SetBid, lm.AnswerAction, 48, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	obs := &eventspb.Observation{Instruction: "Click OK.", Elements: []*eventspb.Element{{Bid: "b1", Role: "button", Text: "OK"}}}
	in, _ := p.Prepare(obs)
	before, err := p.Decide(context.Background(), in, Query{Greedy: true})
	if err != nil {
		t.Fatal(err)
	}
	var top []llama.Tensor
	for _, w := range llama.Random(testLMShape(m.Tokenizer.Len()), 99).Tensors() {
		if strings.HasPrefix(w.Name, "blk1.") {
			top = append(top, w)
		}
	}
	blob, err := llama.EncodeWeights(top)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Swap(context.Background(), blob, 3); err != nil {
		t.Fatal(err)
	}
	after, err := p.Decide(context.Background(), in, Query{Greedy: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Version() != 3 || after.Version != 3 || before.Version != 0 {
		t.Errorf("versions: policy %d, decisions %d then %d", p.Version(), before.Version, after.Version)
	}
	if after.Action.GetLogProb() == before.Action.GetLogProb() && after.Action.GetLm().GetText() == before.Action.GetLm().GetText() {
		t.Error("the new version answers as the old one did, to the last bit")
	}
	if err := p.Swap(context.Background(), []byte("onnx bytes"), 4); err == nil || p.Version() != 3 {
		t.Errorf("a blob that is no version: %v, serving %d", err, p.Version())
	}
}

// TestLMPolicyDecide: the in-process model answers only with actions the
// page can take, whatever its weights (a random model here), greedy or
// sampled; the event carries every generated token with its log-prob
// (the sum is the action's); a greedy decision leaves out the clicks
// already tried; an answer cut by the token bound is a flagged noop with a
// dead letter.
func TestLMPolicyDecide(t *testing.T) {
	m := testLM(t)
	p, err := NewLMPolicy(m, action.SetBid, lm.AnswerAction, 64, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	obs := &eventspb.Observation{Envelope: &eventspb.Envelope{EpisodeId: "ep", Step: 1}, Instruction: "Click OK.", Width: 160, Height: 160,
		Elements: []*eventspb.Element{{Bid: "b1", Role: "button", Text: "OK"}, {Bid: "b2", Role: "textbox", Text: "Name"}}}
	in, err := p.Prepare(obs)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	kinds := map[eventspb.ActionType]int{}
	for i := range 8 {
		d, err := p.Decide(context.Background(), in, Query{Greedy: i == 0, RNG: rng})
		if err != nil {
			t.Fatal(err)
		}
		a, g := d.Action, d.Action.GetLm()
		if g.GetInvalid() {
			// A random model may wander into a long string: cut by the
			// bound, never an unparsable action.
			if g.GetFinishReason() != "length" || d.DeadLetter == nil {
				t.Fatalf("invalid answer %q (%s) not cut by the bound", g.GetText(), g.GetFinishReason())
			}
			continue
		}
		kinds[a.GetType()]++
		if _, err := lm.ParseReply(g.GetText(), obs, action.SetBid); err != nil {
			t.Fatalf("answer %q: %v", g.GetText(), err)
		}
		if len(g.GetTokenIds()) != len(g.GetTokenLogprobs()) || len(g.GetTokens()) != len(g.GetTokenIds()) || g.GetBackend() != BackendLM {
			t.Fatalf("generation %v", g)
		}
		sum := 0.0
		for _, lp := range g.GetTokenLogprobs() {
			if lp > 0 {
				t.Fatalf("log-prob %v > 0", lp)
			}
			sum += float64(lp)
		}
		if math.Abs(sum-a.GetLogProb()) > 1e-3 {
			t.Errorf("log-prob %v, tokens sum to %v", a.GetLogProb(), sum)
		}
	}
	t.Logf("action types of 8 decisions: %v", kinds)

	// Greedy with the click on b1 tried: never b1 again.
	tried := []*eventspb.Action{{Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: "b1"}}
	for range 3 {
		d, err := p.Decide(context.Background(), in, Query{Greedy: true, Avoid: tried})
		if err != nil {
			t.Fatal(err)
		}
		if a := d.Action; a.GetType() == eventspb.ActionType_ACTION_TYPE_CLICK && a.GetBid() == "b1" {
			t.Fatal("greedy decision repeated the avoided click")
		}
	}

	short, err := NewLMPolicy(m, action.SetBid, lm.AnswerAction, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := short.Decide(context.Background(), in, Query{Greedy: true})
	if err != nil {
		t.Fatal(err)
	}
	if g := d.Action.GetLm(); !g.GetInvalid() || d.Action.GetType() != eventspb.ActionType_ACTION_TYPE_NOOP || d.DeadLetter == nil || len(g.GetTokenIds()) != 2 {
		t.Errorf("two-token bound: %v, dead letter %v", d.Action, d.DeadLetter)
	}
}
