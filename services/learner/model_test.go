package learner

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sugarme/gotch/nn"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// easySample is an easy page featurized, with the oracle's action as head
// indices.
func easySample(t *testing.T, arch policy.Architecture, rng *rand.Rand, labels []string) (*policy.Features, policy.Choice) {
	t.Helper()
	obs, act := easyPage(rng, labels)
	f, err := arch.Featurize(obs)
	if err != nil {
		t.Fatal(err)
	}
	c, err := arch.ChoiceOf(f, act)
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

// easyPage returns a click-the-button or type-the-text page and the
// oracle's action on it.
func easyPage(rng *rand.Rand, labels []string) (*eventspb.Observation, *eventspb.Action) {
	if rng.IntN(3) == 0 {
		text := labels[rng.IntN(len(labels))] + " " + labels[rng.IntN(len(labels))]
		obs := &eventspb.Observation{
			Instruction: fmt.Sprintf(`Type "%s" into the text box and press Submit.`, text),
			Width:       160, Height: 210,
			Elements: []*eventspb.Element{
				{Bid: "t", Role: "textbox", Box: &eventspb.Box{X: 10, Y: float32(50 + rng.IntN(40)), W: 120, H: 20}},
				{Bid: "s", Role: "button", Text: "Submit", Box: &eventspb.Box{X: 10, Y: 120, W: 50, H: 20}},
			},
		}
		return obs, &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_FILL, Bid: "t", Text: text}
	}
	n := 3 + rng.IntN(3)
	perm := rng.Perm(len(labels))[:n]
	target := rng.IntN(n)
	obs := &eventspb.Observation{
		Instruction: fmt.Sprintf(`Click on the "%s" button.`, labels[perm[target]]),
		Width:       160, Height: 210,
	}
	for i, li := range perm {
		obs.Elements = append(obs.Elements, &eventspb.Element{
			Bid: fmt.Sprint(i), Role: "button", Text: labels[li],
			Box: &eventspb.Box{X: float32(5 + 30*i), Y: float32(60 + rng.IntN(60)), W: 28, H: 18},
		})
	}
	return obs, &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: fmt.Sprint(target)}
}

// TestPolicyModelLearnsToFollowInstructions trains the gotch module by
// behaviour cloning on easy pages, exports it to ONNX and checks that ONNX
// Runtime's greedy policy solves pages whose labels never appeared in
// training: gradients reach every head, export is faithful, and the
// features carry the instruction-to-element match the easy tier hinges on.
func TestPolicyModelLearnsToFollowInstructions(t *testing.T) {
	arch := policy.DefaultArchitecture()
	arch.ActionTypes = []string{"NOOP", "CLICK", "FILL", "PRESS"}
	// Smaller than the default so the test stays quick on a shared machine.
	arch.FrameHeight, arch.FrameWidth = 16, 16
	arch.MaxElements, arch.MaxCandidates = 8, 12+len(policy.PressKeys)
	arch.Normalize()
	train := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
	held := []string{"apple", "pear", "plum", "grape", "lemon", "melon", "kiwi", "mango"}

	rng := rand.New(rand.NewPCG(3, 4))
	sample := func(labels []string, n int) ([]*policy.Features, []policy.Choice) {
		var fs []*policy.Features
		var cs []policy.Choice
		for range n {
			f, c := easySample(t, arch, rng, labels)
			fs, cs = append(fs, f), append(cs, c)
		}
		return fs, cs
	}
	trainF, trainC := sample(train, 64)
	batch, err := arch.Stack(trainF)
	if err != nil {
		t.Fatal(err)
	}

	var first, last float64
	var trained policy.Params
	err = onTorchThread(func() error {
		m, err := newPolicyModel(arch, arch.NewParams(5))
		if err != nil {
			return err
		}
		defer m.close()
		in, err := batchInputs(batch)
		if err != nil {
			return err
		}
		opt, err := nn.DefaultAdamConfig().Build(m.vs, 3e-3)
		if err != nil {
			return err
		}
		for step := range 30 {
			out, err := m.forward(in)
			if err != nil {
				return err
			}
			lp, err := jointLogProb(&arch, out, trainC)
			if err != nil {
				return err
			}
			loss, err := lp.Mean(lp.DType(), false)
			if err != nil {
				return err
			}
			if loss, err = loss.Neg(true); err != nil {
				return err
			}
			v, err := float64Values(loss)
			if err != nil {
				return err
			}
			if step == 0 {
				first = v[0]
			}
			last = v[0]
			if err := opt.BackwardStep(loss); err != nil {
				return err
			}
		}
		trained, err = m.exportParams()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("behaviour-cloning loss %.3f -> %.3f", first, last)
	if !(last < first/4) {
		t.Fatalf("loss %.3f -> %.3f: the module did not learn", first, last)
	}

	onnx, err := policy.WriteONNX(arch, trained)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := policy.NewSession(onnx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	testF, testC := sample(held, 60)
	tb, err := arch.Stack(testF)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := sess.Run(tb)
	if err != nil {
		t.Fatal(err)
	}
	right := 0
	for i, f := range testF {
		d, err := arch.Sample(f, outs.Sample(&arch, i), nil, true)
		if err != nil {
			t.Fatal(err)
		}
		if d.Choice == testC[i] {
			right++
		}
	}
	t.Logf("greedy ONNX Runtime policy solves %d/%d held-out pages", right, len(testF))
	if right < len(testF)*9/10 {
		t.Fatalf("solved %d/%d held-out pages, want at least 90%%", right, len(testF))
	}
}
