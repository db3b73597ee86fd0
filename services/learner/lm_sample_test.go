package learner

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/casstore"
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
// did. They agree too when the actor keeps its frozen-block states
// (LMModel.Frozen) and the twin starts from them (to 3e-4 a token: the
// states are half precision), and when those states
// cannot be used (tampered, or after other blocks) the twin computes its
// own, and when the actor answers in the target form (scored in the form
// the step recorded, whatever the learner's own), and when it samples at
// a temperature (scored at the one the step recorded).
func TestLMLogProbsMatchTheActor(t *testing.T) {
	tok, err := tokenizer.New(tokenizer.ByteVocab("<|im_start|>", "<|im_end|>"))
	if err != nil {
		t.Fatal(err)
	}
	m := llama.Random(gguf.Llama{Blocks: 2, Width: 32, FeedForward: 64, Heads: 4, KVHeads: 2, RopeDims: 8, Context: 4096,
		Vocab: tok.Len(), RopeBase: 10000, NormEps: 1e-5}, 11)
	eos, _ := tok.ID("<|im_end|>")
	obs := &eventspb.Observation{Envelope: &eventspb.Envelope{EpisodeId: "ep", Step: 2}, Instruction: "Type \"ab\" in Name.",
		Elements: []*eventspb.Element{{Bid: "b1", Role: "button", Text: "OK"}, {Bid: "b2", Role: "textbox", Text: "Name"}}}
	dec := lm.NewDecoder(tok, eos)
	for _, tc := range []struct {
		name string
		tap  int // the actor's tap block (0: keeps no states)
		// answer is the actor's answer form ("": lm.AnswerAction); the
		// learner scores each step in the form it recorded.
		answer lm.Answer
		// temp is the actor's sampling temperature (0: 1).
		temp float64
		// spoil makes the kept states unusable: the twin must compute.
		spoil          func(t *testing.T, st *casstore.Store, s *lmSample)
		loaded, failed int64
	}{
		{name: "computed"},
		{name: "target-answer", answer: lm.AnswerTarget},
		{name: "tempered", temp: 1.7},
		{name: "actor-states", tap: 1, loaded: 6},
		{name: "tampered", tap: 1, failed: 6, spoil: func(t *testing.T, st *casstore.Store, s *lmSample) {
			if err := os.WriteFile(filepath.Join(st.Dir(), s.frozen.ref.sha), []byte("not the states"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "other-blocks", tap: 1, spoil: func(t *testing.T, st *casstore.Store, s *lmSample) { s.frozen.ref.blocks = 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var store *casstore.Store
			if tc.tap > 0 {
				if store, err = casstore.Open(t.TempDir()); err != nil {
					t.Fatal(err)
				}
			}
			sess, err := llama.NewTapSession(m.ONNXTap(tc.tap), m.Shape, 1, tc.tap)
			if err != nil {
				t.Fatal(err)
			}
			p, err := actor.NewLMPolicy(actor.LMModel{Session: sess, Tokenizer: tok, Name: "random", EOS: eos, Frozen: store, Temperature: tc.temp}, action.SetBid, cmp.Or(tc.answer, lm.AnswerAction), 48, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			in, err := p.Prepare(obs)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(4, 4))
			atOne := 0 // tempered answers' free-text tokens, drawn at 1
			var samples []*lmSample
			var recorded []float64
			for range 6 {
				d, err := p.Decide(context.Background(), in, actor.Query{RNG: rng})
				if err != nil {
					t.Fatal(err)
				}
				s, err := newLMSample(tok, dec, obs, d.Action, action.SetBid, lm.AnswerAction)
				if err != nil {
					t.Fatal(err)
				}
				if got := lm.Of(d.Action.GetLm()); got != cmp.Or(tc.answer, lm.AnswerAction) {
					t.Fatalf("the action recorded answer form %q", got)
				}
				if got, want := d.Action.GetLm().GetTemperature(), float32(cmp.Or(tc.temp, 1)); got != want {
					t.Fatalf("the action recorded temperature %v, want %v", got, want)
				}
				if (s.temps != nil) != (tc.temp > 0) {
					t.Fatalf("sampled at %v: token temperatures %v", tc.temp, s.temps)
				}
				for _, x := range s.temps {
					if x == 1 {
						atOne++
					}
				}
				if (s.frozen.ref != nil) != (tc.tap > 0) {
					t.Fatalf("actor tapped after %d blocks: states kept %v", tc.tap, s.frozen.ref != nil)
				}
				if tc.spoil != nil {
					tc.spoil(t, store, s)
				}
				samples = append(samples, s)
				recorded = append(recorded, d.Action.GetLogProb())
			}
			if tc.temp > 0 && atOne == 0 {
				t.Fatal("no tempered answer wrote free text: the per-token temperatures are untested")
			}
			err = onTorchThread(func() error {
				tw, err := newLMTwin(m, 1)
				if err != nil {
					return err
				}
				defer tw.close()
				tw.store = store
				lp, err := lmLogProbs(context.Background(), tw, samples)
				if err != nil {
					return err
				}
				got, err := float64Values(lp)
				if err != nil {
					return err
				}
				for i := range samples {
					// The actor's states travel in half precision: 11
					// significant bits, so the bound grows with the
					// answer (12-06: at most 1.8e-4 a token here).
					bound := 1e-3
					if tc.loaded > 0 {
						bound = max(bound, 3e-4*float64(len(samples[i].answer)))
					}
					if math.Abs(got[i]-recorded[i]) > bound {
						t.Errorf("answer %d (%d tokens): learner %.5f, actor %.5f", i, len(samples[i].answer), got[i], recorded[i])
					}
				}
				if tw.loaded != tc.loaded || tw.loadFailed != tc.failed {
					t.Errorf("states loaded %d, failed %d; want %d, %d", tw.loaded, tw.loadFailed, tc.loaded, tc.failed)
				}
				t.Logf("log-probs: learner %v, actor %v", got, recorded)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	// A step whose answer leaves the page's language is refused.
	bad := &eventspb.Action{Envelope: &eventspb.Envelope{EventId: "x"}, Lm: &eventspb.LMOutput{TokenIds: []int32{int32('z')}}}
	if _, err := newLMSample(tok, dec, obs, bad, action.SetBid, lm.AnswerAction); err == nil {
		t.Error("an answer outside the language was scored")
	}
}
