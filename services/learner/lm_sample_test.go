package learner

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
	"github.com/asyncwebrl/asyncwebrl/services/lm/tokenizer"
)

// TestLMLogProbsMatchTheActor: the actor's lm backend samples answers on
// ONNX Runtime and records their behaviour log-probs; the learner rebuilds
// each step's prompt and constraint from the observation and scores the
// answer with its twin: the same log-prob, to 1e-3, for every answer. The
// two halves of the language model's training agree on what the policy
// did.
func TestLMLogProbsMatchTheActor(t *testing.T) {
	tok, err := tokenizer.New(tokenizer.ByteVocab("<|im_start|>", "<|im_end|>"))
	if err != nil {
		t.Fatal(err)
	}
	m := llama.Random(gguf.Llama{Blocks: 2, Width: 32, FeedForward: 64, Heads: 4, KVHeads: 2, RopeDims: 8, Context: 4096,
		Vocab: tok.Len(), RopeBase: 10000, NormEps: 1e-5}, 11)
	sess, err := llama.NewSession(m.ONNX(), m.Shape, 1)
	if err != nil {
		t.Fatal(err)
	}
	eos, _ := tok.ID("<|im_end|>")
	p, err := actor.NewLMPolicy(actor.LMModel{Session: sess, Tokenizer: tok, Name: "random", EOS: eos}, action.SetBid, 48, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	obs := &eventspb.Observation{Envelope: &eventspb.Envelope{EpisodeId: "ep", Step: 2}, Instruction: "Type \"ab\" in Name.",
		Elements: []*eventspb.Element{{Bid: "b1", Role: "button", Text: "OK"}, {Bid: "b2", Role: "textbox", Text: "Name"}}}
	in, err := p.Prepare(obs)
	if err != nil {
		t.Fatal(err)
	}
	dec := lm.NewDecoder(tok, eos)
	rng := rand.New(rand.NewPCG(4, 4))
	var samples []*lmSample
	var recorded []float64
	for range 6 {
		d, err := p.Decide(context.Background(), in, actor.Query{RNG: rng})
		if err != nil {
			t.Fatal(err)
		}
		s, err := newLMSample(tok, dec, obs, d.Action, action.SetBid)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, s)
		recorded = append(recorded, d.Action.GetLogProb())
	}
	err = onTorchThread(func() error {
		tw, err := newLMTwin(m, 1)
		if err != nil {
			return err
		}
		defer tw.close()
		lp, err := lmLogProbs(context.Background(), tw, samples)
		if err != nil {
			return err
		}
		got, err := float64Values(lp)
		if err != nil {
			return err
		}
		for i := range samples {
			if math.Abs(got[i]-recorded[i]) > 1e-3 {
				t.Errorf("answer %d (%d tokens): learner %.5f, actor %.5f", i, len(samples[i].answer), got[i], recorded[i])
			}
		}
		t.Logf("log-probs: learner %v, actor %v", got, recorded)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A step whose answer leaves the page's language is refused.
	bad := &eventspb.Action{Envelope: &eventspb.Envelope{EventId: "x"}, Lm: &eventspb.LMOutput{TokenIds: []int32{int32('z')}}}
	if _, err := newLMSample(tok, dec, obs, bad, action.SetBid); err == nil {
		t.Error("an answer outside the language was scored")
	}
}
