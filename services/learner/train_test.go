package learner

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// smallArch keeps trainer tests quick on a shared machine.
func smallArch() policy.Architecture {
	arch := policy.DefaultArchitecture()
	arch.ActionTypes = []string{"NOOP", "CLICK", "FILL", "PRESS"}
	arch.FrameHeight, arch.FrameWidth = 16, 16
	arch.MaxElements, arch.MaxCandidates = 8, 12+len(policy.PressKeys)
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
		good := &sample{feats: policy.Pack(f), choice: c, ret: 1, adv: 1, key: "a"}
		wrong := c
		wrong.Element = (c.Element + 1) % len(f.BIDs)
		bad := &sample{feats: policy.Pack(f), choice: wrong, ret: 0, adv: -1, key: "b"}
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
		fs[i], cs[i] = s.feats.Unpack(), s.choice
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
	for _, algo := range Algos {
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

// TestDecoupledRatio: under the decoupled objective a stale sample (its
// behaviour log-prob far from the learner's) is not clipped at its first
// use, where the plain objective clips it at once; it is weighed by
// π_prox/π_behav, and left out above BehaviourCap; its later uses are
// clipped against the proximal log-prob it got at the first.
func TestDecoupledRatio(t *testing.T) {
	arch := smallArch()
	run := func(algo Algo, shift float64, steps int) (first, last stepStats, batch []*sample) {
		t.Helper()
		batch = rewardBatch(t, arch, 32, 21)
		hp := DefaultHyper()
		hp.Algo, hp.LR = algo, 3e-3
		err := onTorchThread(func() error {
			tr, err := newTrainer(arch, arch.NewParams(3), hp)
			if err != nil {
				return err
			}
			defer tr.close()
			lp := logps(t, tr, batch)
			for i, x := range batch {
				x.logpOld = lp[i] - shift // acted by an older policy
			}
			for k := range steps {
				st, err := tr.step(batch)
				if err != nil {
					return err
				}
				if k == 0 {
					first = st
				}
				last = st
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return first, last, batch
	}
	// The behaviour policy gave every action e^-1 of today's probability.
	plain, _, _ := run(PPOPlain, 1, 1)
	dec, last, batch := run(PPO, 1, 40)
	if plain.ClipFrac < 0.99 {
		t.Errorf("plain PPO clipped %.2f of the stale batch at its first use, want all", plain.ClipFrac)
	}
	if dec.ClipFrac != 0 || math.Abs(dec.BehaviourWeight-math.E) > 1e-3 || dec.BehaviourCapped != 0 {
		t.Errorf("decoupled first use: clip %.2f, behaviour weight %.4f, capped %.2f; want 0, e, 0", dec.ClipFrac, dec.BehaviourWeight, dec.BehaviourCapped)
	}
	if last.ClipFrac == 0 {
		t.Errorf("after 40 updates on the same batch nothing was clipped against the proximal log-probs")
	}
	for _, x := range batch {
		if !x.prox.set || math.Abs(x.prox.logp-(x.logpOld+1)) > 1e-4 {
			t.Fatalf("proximal log-prob %v (set %v), want the first use's %v", x.prox.logp, x.prox.set, x.logpOld+1)
		}
	}
	// e^2 > BehaviourCap: every sample is left out of the policy term.
	capped, _, _ := run(PPO, 2, 1)
	if capped.BehaviourCapped != 1 || capped.PolicyLoss != 0 {
		t.Errorf("behaviour weight e^2: capped %.2f, policy loss %v; want all capped, 0", capped.BehaviourCapped, capped.PolicyLoss)
	}
}

// TestTrainerMixedBatch: a batch of policy samples and demonstrations
// counts both, clones the demonstrations, and keeps them out of the value
// loss (they carry no return): the same policy samples give the same value
// loss with and without demonstrations beside them.
func TestTrainerMixedBatch(t *testing.T) {
	arch := smallArch()
	pol := rewardBatch(t, arch, 24, 11)
	var demos []*sample
	for _, s := range rewardBatch(t, arch, 8, 13) {
		if s.ret > 0 {
			d := *s
			d.demo, d.ret = true, 0
			demos = append(demos, &d)
		}
	}
	mixed := append(append([]*sample(nil), pol...), demos...)
	var alone, with stepStats
	err := onTorchThread(func() error {
		for _, c := range []struct {
			batch []*sample
			st    *stepStats
		}{{pol, &alone}, {mixed, &with}} {
			tr, err := newTrainer(arch, arch.NewParams(3), DefaultHyper())
			if err != nil {
				return err
			}
			st, err := tr.step(c.batch)
			tr.close()
			if err != nil {
				return err
			}
			*c.st = st
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if with.Policy != len(pol) || with.Demo != len(demos) || with.BCLoss <= 0 {
		t.Fatalf("mixed step: %d policy, %d demo samples, bc loss %v; want %d, %d, > 0", with.Policy, with.Demo, with.BCLoss, len(pol), len(demos))
	}
	if alone.BCLoss != 0 {
		t.Fatalf("a batch without demonstrations has bc loss %v", alone.BCLoss)
	}
	if d := math.Abs(with.ValueLoss - alone.ValueLoss); d > 1e-6*max(1, alone.ValueLoss) {
		t.Fatalf("value loss %v with demonstrations beside the policy samples, %v without", with.ValueLoss, alone.ValueLoss)
	}
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

// TestStepWeights: the step normaliser weighs every policy sample 1; the
// trajectory normaliser 1/|episode| scaled to mean 1, so an episode's
// steps weigh 1 together whatever its length; demonstrations weigh 0.
func TestStepWeights(t *testing.T) {
	batch := []*sample{{epLen: 2}, {epLen: 2}, {epLen: 8}, {demo: true, epLen: 1}, {epLen: 8}}
	pol := []int{0, 1, 2, 4}
	if got := stepWeights(batch, pol, NormStep); !slices.Equal(got, []float32{1, 1, 1, 0, 1}) {
		t.Fatalf("step weights %v", got)
	}
	got := stepWeights(batch, pol, NormTrajectory)
	// 1/2, 1/2, 1/8, 1/8 have mean 5/16: weights 8/5, 8/5, 2/5, 2/5.
	want := []float32{1.6, 1.6, 0.4, 0, 0.4}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("trajectory weights %v, want %v", got, want)
		}
	}
	if _, err := ParseNorm("episode"); err == nil {
		t.Fatal("ParseNorm accepted an unknown normaliser")
	}
}
