package learner

import (
	"math/rand/v2"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// smallArch keeps trainer tests quick on a shared machine.
func smallArch() policy.Architecture {
	arch := policy.DefaultArchitecture()
	arch.ActionTypes = []string{"NOOP", "CLICK", "FILL", "PRESS"}
	arch.FrameHeight, arch.FrameWidth = 16, 16
	arch.MaxElements, arch.MaxCandidates = 8, 12
	arch.Normalize()
	return arch
}

// rewardBatch builds policy samples on easy pages: half take the oracle's
// action (return 1), half a wrong element (return 0). For GRPO the group
// advantage says the same.
func rewardBatch(t *testing.T, arch policy.Architecture, n int, seed uint64) []*sample {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	labels := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	var out []*sample
	for len(out) < n {
		f, c := easySample(t, arch, rng, labels)
		if len(f.BIDs) < 3 {
			continue // a fill page: its other element is masked for fill
		}
		good := &sample{feats: f, choice: c, ret: 1, adv: 1, key: "a"}
		wrong := c
		wrong.Element = (c.Element + 1) % len(f.BIDs)
		bad := &sample{feats: f, choice: wrong, ret: 0, adv: -1, key: "b"}
		out = append(out, good, bad)
	}
	return out
}

// logps returns the current joint log-probs of the batch's choices.
func logps(t *testing.T, tr *trainer, batch []*sample) []float64 {
	t.Helper()
	fs := make([]*policy.Features, len(batch))
	cs := make([]policy.Choice, len(batch))
	for i, s := range batch {
		fs[i], cs[i] = s.feats, s.choice
	}
	b, err := tr.arch.Stack(fs)
	if err != nil {
		t.Fatal(err)
	}
	in, err := batchInputs(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tr.model.forward(in)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := jointLogProb(&tr.arch, out, cs)
	if err != nil {
		t.Fatal(err)
	}
	v, err := float64Values(lp)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// margin is mean log-prob of rewarded choices minus unrewarded ones.
func margin(batch []*sample, lp []float64) float64 {
	var g, b float64
	var ng, nb int
	for i, s := range batch {
		if s.ret > 0 {
			g += lp[i]
			ng++
		} else {
			b += lp[i]
			nb++
		}
	}
	return g/float64(ng) - b/float64(nb)
}

// TestTrainerAlgorithmsPreferRewardedActions runs each objective on the
// same experience and checks that rewarded actions become more likely than
// unrewarded ones on the same pages; and that behaviour cloning raises the
// demonstrated actions' log-prob.
func TestTrainerAlgorithmsPreferRewardedActions(t *testing.T) {
	arch := smallArch()
	for _, algo := range []Algo{PPO, Reinforce, GRPO} {
		t.Run(string(algo), func(t *testing.T) {
			batch := rewardBatch(t, arch, 48, 7)
			hp := DefaultHyper()
			hp.Algo, hp.LR = algo, 3e-3
			var before, after float64
			err := onTorchThread(func() error {
				tr, err := newTrainer(arch, arch.NewParams(3), hp)
				if err != nil {
					return err
				}
				defer tr.close()
				lp := logps(t, tr, batch)
				for i, s := range batch {
					s.logpOld = lp[i]
				}
				before = margin(batch, lp)
				for range 30 {
					st, err := tr.step(batch)
					if err != nil {
						return err
					}
					if st.Policy != len(batch) || st.Demo != 0 {
						t.Errorf("counted %d policy and %d demo samples", st.Policy, st.Demo)
					}
				}
				after = margin(batch, logps(t, tr, batch))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: log-prob margin rewarded - unrewarded %.3f -> %.3f", algo, before, after)
			if !(after > before+0.5) {
				t.Fatalf("%s did not learn to prefer rewarded actions: margin %.3f -> %.3f", algo, before, after)
			}
		})
	}
	t.Run("bc", func(t *testing.T) {
		batch := rewardBatch(t, arch, 48, 9)
		var demos []*sample
		for _, s := range batch {
			if s.ret > 0 {
				s.demo = true
				demos = append(demos, s)
			}
		}
		var before, after float64
		err := onTorchThread(func() error {
			tr, err := newTrainer(arch, arch.NewParams(3), DefaultHyper())
			if err != nil {
				return err
			}
			defer tr.close()
			before = mean(logps(t, tr, demos))
			for range 30 {
				st, err := tr.step(demos)
				if err != nil {
					return err
				}
				if st.Demo != len(demos) || st.BCLoss <= 0 {
					t.Errorf("bc step: %d demo samples, bc loss %v", st.Demo, st.BCLoss)
				}
			}
			after = mean(logps(t, tr, demos))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("bc: demonstrated log-prob %.3f -> %.3f", before, after)
		if !(after > before+0.5) {
			t.Fatalf("behaviour cloning did not raise the demonstrated actions' log-prob: %.3f -> %.3f", before, after)
		}
	})
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TestStaleness checks the policy lag the learner publishes with each
// version: demonstrations left out, a sample acted by the version being
// trained (impossible, but a clock race away) counts 0.
func TestStaleness(t *testing.T) {
	batch := []*sample{{version: 7}, {version: 5}, {version: 2, demo: true}, {version: 6}, {version: 9}}
	mean, largest := staleness(batch, 8)
	if mean != 1.5 || largest != 3 {
		t.Errorf("staleness = %v, %v; want mean (1+3+2+0)/4 = 1.5 and largest 3", mean, largest)
	}
	if mean, largest := staleness([]*sample{{demo: true}}, 4); mean != 0 || largest != 0 {
		t.Errorf("a batch of demonstrations: %v, %v; want 0, 0", mean, largest)
	}
}
