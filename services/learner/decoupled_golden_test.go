package learner

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// lossRow is one policy sample of a hand-computed batch: its log-prob under
// the parameters being trained (logp), under the proximal policy (prox: the
// parameters at its first use), under the behaviour policy that acted it
// (behav: the stored log-prob) and its advantage.
type lossRow struct{ logp, prox, behav, adv float64 }

// surrogate is the reference of trainer.step's policy term for one sample
// (the golden file's arithmetic, kept apart from the tensor code it checks):
// -min(r·A, clip(r, 1±ε)·A)·w with, decoupled, r = π/π_prox and the
// behaviour weight w = π_prox/π_behav (0 above BehaviourCap); plain, r =
// π/π_behav and w = 1.
func surrogate(x lossRow, eps float64, decoupled bool) (term, ratio, weight float64, clipped, capped bool) {
	anchor, weight := x.behav, 1.0
	if decoupled {
		anchor, weight = x.prox, math.Exp(x.prox-x.behav)
		if weight > BehaviourCap {
			weight, capped = 0, true
		}
	}
	ratio = math.Exp(x.logp - anchor)
	c := math.Min(math.Max(ratio, 1-eps), 1+eps)
	term = -math.Min(ratio*x.adv, c*x.adv) * weight
	if weight == 0 {
		term = 0 // not -0 in the golden file
	}
	return term, ratio, weight, math.Abs(ratio-1) > eps, capped
}

// TestDecoupledLossGolden is the decoupled objective on hand-computed
// batches (testdata/decoupled), beside the plain one: per sample the ratio,
// the behaviour weight and the term; per batch the policy loss (the mean
// over policy samples, capped ones counted as 0), the clip fraction and the
// share capped. TestDecoupledLossMatchesTrainer holds the trainer to the
// same arithmetic. Rewrite with `go test ./services/learner -run
// DecoupledLossGolden -rewrite`.
//
//	loss algo=ppo|ppo-plain|grpo|grpo-plain [eps=E]
//	logp=L prox=P behav=B adv=A   (one line a sample)
func TestDecoupledLossGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/decoupled", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "loss" {
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			var name string
			d.ScanArgs(t, "algo", &name)
			algo, err := ParseAlgo(name)
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			eps := DefaultHyper().ClipEps
			if d.HasArg("eps") {
				d.ScanArgs(t, "eps", &eps)
			}
			var b strings.Builder
			var sum float64
			var n, clip, capped int
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				var x lossRow
				if _, err := fmt.Sscanf(line, "logp=%g prox=%g behav=%g adv=%g", &x.logp, &x.prox, &x.behav, &x.adv); err != nil {
					d.Fatalf(t, "%q: %v", line, err)
				}
				term, r, w, c, cp := surrogate(x, eps, algo.Decoupled())
				n++
				sum += term
				if c {
					clip++
				}
				if cp {
					capped++
				}
				fmt.Fprintf(&b, "ratio %.4f clipped %-5v weight %.4f capped %-5v term %+.4f\n", r, c, w, cp, term)
			}
			fmt.Fprintf(&b, "policy loss %+.4f, clip fraction %.2f, capped %.2f\n", sum/float64(n), float64(clip)/float64(n), float64(capped)/float64(n))
			return b.String()
		})
	})
}

// TestDecoupledLossMatchesTrainer: the trainer's policy loss on a real batch
// is the reference's mean, decoupled and plain, at a sample's first use
// (the proximal log-prob is then the current one) and at its second (it is
// the first's).
func TestDecoupledLossMatchesTrainer(t *testing.T) {
	arch := smallArch()
	for _, algo := range []Algo{GRPO, GRPOPlain} {
		batch := rewardBatch(t, arch, 16, 5)
		hp := DefaultHyper()
		hp.Algo, hp.LR = algo, 3e-3
		err := onTorchThread(func() error {
			tr, err := newTrainer(arch, arch.NewParams(2), hp)
			if err != nil {
				return err
			}
			defer tr.close()
			first := logps(t, tr, batch)
			for i, x := range batch {
				// Behaviour policies 0 to 2 nats less sure: the last are capped.
				x.logpOld = first[i] - 2*float64(i)/float64(len(batch)-1)
			}
			prox := first
			for use := 1; use <= 2; use++ {
				now := logps(t, tr, batch)
				var want float64
				for i, x := range batch {
					term, _, _, _, _ := surrogate(lossRow{logp: now[i], prox: prox[i], behav: x.logpOld, adv: x.adv}, hp.ClipEps, algo.Decoupled())
					want += term
				}
				want /= float64(len(batch))
				st, err := tr.step(batch)
				if err != nil {
					return err
				}
				if math.Abs(st.PolicyLoss-want) > 1e-4 {
					t.Errorf("%s, use %d: policy loss %.6f, the reference's %.6f", algo, use, st.PolicyLoss, want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
