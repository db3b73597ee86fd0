package learner

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
	"github.com/asyncwebrl/asyncwebrl/services/lm/tokenizer"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestIntegrationLearnerTrainsALanguageModel: one-step episodes a language
// model acted in (its answers sampled by the actor's lm backend on ONNX
// Runtime, clicking OK rewarded 1, anything else 0, in GRPO groups of 4)
// go through the real broker's transitions topic into the learner in lm
// mode, which trains GRPO and publishes a version: its blob is the trained
// blocks (lm-tensors-npz), and the model with them clicks OK more often
// than the base model on the same prompt.
func TestIntegrationLearnerTrainsALanguageModel(t *testing.T) {
	kc := kafkatest.Real(t, "lmtrain", topics.WithPartitions(2))
	seeds, cat := kc.Seeds, kc.Catalog
	cl := kc.Client(t, kgo.ProducerBatchMaxBytes(16<<20))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	tok, err := tokenizer.New(tokenizer.ByteVocab("<|im_start|>", "<|im_end|>"))
	if err != nil {
		t.Fatal(err)
	}
	eos, _ := tok.ID("<|im_end|>")
	shape := testLMShapeFor(tok.Len())
	base := llama.Random(shape, 21)
	sess, err := llama.NewSession(base.ONNX(), shape, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := actor.NewLMPolicy(actor.LMModel{Model: base, Session: sess, Tokenizer: tok, Name: "random", EOS: eos, Threads: 1}, action.SetBid, lm.AnswerAction, 32, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	obs := &eventspb.Observation{Instruction: "Click OK.", Elements: []*eventspb.Element{{Bid: "1", Role: "button", Text: "OK"}, {Bid: "2", Role: "button", Text: "No"}}}
	in, err := p.Prepare(obs)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	site := catalog.SitesOf("click-button", catalog.SplitTrain)[0]
	okBefore, n := 0, 48
	for e := range n {
		d, err := p.Decide(ctx, in, actor.Query{RNG: rng})
		if err != nil {
			t.Fatal(err)
		}
		a := d.Action
		a.Envelope = &eventspb.Envelope{Source: eventspb.Source_SOURCE_POLICY, EventId: fmt.Sprintf("a%d", e)}
		reward := 0.0
		if a.GetType() == eventspb.ActionType_ACTION_TYPE_CLICK && a.GetBid() == "1" {
			reward, okBefore = 1, okBefore+1
		}
		tr := &eventspb.Transition{Envelope: eventspb.NewEnvelope("test"), EpisodeId: fmt.Sprintf("ep-%d", e), Step: 0, Obs: obs, Action: a,
			Reward: reward, Done: true, Success: reward > 0, LogProbOld: a.GetLogProb(), PolicyName: "lm-test",
			Family: "click-button", Site: site, Tier: eventspb.Tier_TIER_EASY, GroupId: fmt.Sprintf("g%d", e/4)}
		b, err := eventspb.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		cl.Produce(ctx, &kgo.Record{Topic: cat.Name(topics.Transitions), Key: []byte(tr.EpisodeId), Value: b}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if okBefore == 0 || okBefore == n {
		t.Skipf("the random model clicked OK in %d of %d episodes: no signal to learn from with this seed", okBefore, n)
	}
	cfg, err := config.Parse([]string{"-brokers=" + strings.Join(seeds, ",")}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	hp := DefaultHyper()
	hp.Algo, hp.LR = GRPOPlain, 1e-2
	svc, err := New(cfg, kafka.NewFactory(cfg, seeds, nil), cat, WithPolicyName("lm-test"), WithBatchSize(8), WithReplayRatio(4),
		WithHyper(hp), WithGroupSize(4), WithLanguageModel(LMConfig{Model: base, Tokenizer: tok, EOS: eos, Set: action.SetBid, TrainBlocks: 1}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.TrainOffline(ctx, cat.Name(topics.Transitions), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws := publishedVersions(ctx, t, seeds, cat.Name(topics.Weights))
	if len(ws) != 1 {
		t.Fatalf("published %d versions, want 1 (offline: %d records, %d samples, %d updates, version %d)",
			len(ws), res.Records, res.Samples, res.Updates, res.Version)
	}
	if ws[0].GetFormat() != llama.WeightsFormat {
		t.Fatalf("published format %q, want %q", ws[0].GetFormat(), llama.WeightsFormat)
	}
	// The new version in the actor's backend: how often it clicks OK.
	if err := p.Swap(ctx, ws[0].GetOnnx(), ws[0].GetVersion()); err != nil {
		t.Fatal(err)
	}
	okAfter := 0
	for range n {
		d, err := p.Decide(ctx, in, actor.Query{RNG: rng})
		if err != nil {
			t.Fatal(err)
		}
		if a := d.Action; a.GetType() == eventspb.ActionType_ACTION_TYPE_CLICK && a.GetBid() == "1" {
			okAfter++
		}
	}
	t.Logf("%d samples, %d updates, version %d (%d bytes): clicks on OK %d/%d before, %d/%d after", res.Samples, res.Updates, ws[0].GetVersion(),
		len(ws[0].GetOnnx()), okBefore, n, okAfter, n)
	if okAfter <= okBefore {
		t.Errorf("training did not raise the rewarded answer: %d/%d before, %d/%d after", okBefore, n, okAfter, n)
	}
}

func testLMShapeFor(vocab int) gguf.Llama {
	return gguf.Llama{Blocks: 2, Width: 32, FeedForward: 64, Heads: 4, KVHeads: 2, RopeDims: 8, Context: 4096,
		Vocab: vocab, RopeBase: 10000, NormEps: 1e-5}
}
