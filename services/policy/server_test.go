package policy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// TestServerSwapsMidStreamConsistently has many executors submitting while
// the weights change under them. Each version's parameters come from a
// different seed, so a result computed by one version but stamped with
// another would not match the reference that a plain Session computes for
// the stamped version.
func TestServerSwapsMidStreamConsistently(t *testing.T) {
	a := smallArch()
	const versions = 4
	models := make([][]byte, versions)
	for v := range versions {
		models[v] = testModel(t, a, uint64(100+v))
	}
	// Distinct observations so that a mix-up between samples shows too.
	var feats []*Features
	for i := range 6 {
		obs := clickButtonObs(t)
		obs.Instruction = fmt.Sprintf(`Click on the "%d" button.`, i)
		obs.Elements = obs.Elements[:1+i%3]
		f, err := a.Featurize(obs)
		if err != nil {
			t.Fatal(err)
		}
		feats = append(feats, f)
	}
	// Reference outputs of every (version, observation) from a plain session.
	ref := make([][]*Output, versions)
	for v := range versions {
		s, err := NewSession(models[v])
		if err != nil {
			t.Fatal(err)
		}
		b, err := a.Stack(feats)
		if err != nil {
			t.Fatal(err)
		}
		outs, err := s.Run(b)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		for i := range feats {
			ref[v] = append(ref[v], outs.Sample(&a, i))
		}
	}

	srv, err := NewServer(models[0], 0, WithMaxBatch(8), WithMaxWait(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const submitters, perSubmitter = 12, 40
	var wg sync.WaitGroup
	seen := make([]map[uint64]int, submitters)
	errs := make(chan error, submitters)
	for w := range submitters {
		seen[w] = map[uint64]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := uint64(0)
			for j := range perSubmitter {
				i := (w + j) % len(feats)
				o, err := srv.Submit(ctx, feats[i])
				if err != nil {
					errs <- err
					return
				}
				if o.Version < last {
					errs <- fmt.Errorf("submitter %d saw version %d after %d", w, o.Version, last)
					return
				}
				last = o.Version
				seen[w][o.Version]++
				if o.BatchSize < 1 || o.BatchSize > 8 {
					errs <- fmt.Errorf("batch size %d outside 1..8", o.BatchSize)
					return
				}
				if d := maxDiff(o, ref[o.Version][i]); d > 1e-5 {
					errs <- fmt.Errorf("sample %d stamped version %d differs from that version's reference by %g", i, o.Version, d)
					return
				}
			}
		}()
	}
	// Swap while they run; each swap waits until some submitter saw the
	// previous version, so every version serves at least one result.
	for v := 1; v < versions; v++ {
		for srv.Version() == uint64(v-1) {
			o, err := srv.Submit(ctx, feats[0])
			if err != nil {
				t.Fatal(err)
			}
			if o.Version == uint64(v-1) {
				break
			}
		}
		if err := srv.Swap(ctx, models[v], uint64(v)); err != nil {
			t.Fatal(err)
		}
		if srv.Version() != uint64(v) {
			t.Fatalf("Version() = %d after swapping to %d", srv.Version(), v)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	perVersion := map[uint64]int{}
	for _, m := range seen {
		for v, n := range m {
			perVersion[v] += n
		}
	}
	t.Logf("results per version across the submitters: %v", perVersion)
	// After the last swap returned, new submissions get the last version.
	o, err := srv.Submit(ctx, feats[1])
	if err != nil {
		t.Fatal(err)
	}
	if o.Version != versions-1 || maxDiff(o, ref[versions-1][1]) > 1e-5 {
		t.Fatalf("after the swaps: version %d, diff %g", o.Version, maxDiff(o, ref[versions-1][1]))
	}
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Submit(ctx, feats[0]); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after Close: %v, want ErrClosed", err)
	}
	if err := srv.Swap(ctx, models[0], 9); !errors.Is(err, ErrClosed) {
		t.Fatalf("Swap after Close: %v, want ErrClosed", err)
	}
	if err := srv.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestServerRefusesOtherArchitectures(t *testing.T) {
	a := smallArch()
	srv, err := NewServer(testModel(t, a, 1), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	b := a
	b.MaxElements++
	b.Normalize()
	if err := srv.Swap(context.Background(), testModel(t, b, 1), 2); err == nil {
		t.Fatal("want an error swapping to another architecture")
	}
	if srv.Version() != 1 {
		t.Fatalf("version %d after a refused swap", srv.Version())
	}
	// Features of the other architecture are refused before batching.
	f, err := b.Featurize(typeTextObs())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Submit(context.Background(), f); err == nil {
		t.Fatal("want an error submitting features of another architecture")
	}
	if err := srv.Swap(context.Background(), []byte("junk"), 3); err == nil {
		t.Fatal("want an error swapping to junk")
	}
}

func TestServerSubmitHonoursContext(t *testing.T) {
	a := smallArch()
	srv, err := NewServer(testModel(t, a, 1), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	f, err := a.Featurize(typeTextObs())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := srv.Submit(ctx, f); !errors.Is(err, context.Canceled) {
		// The request may have been taken before the cancel was seen; it
		// then completes normally.
		if err != nil {
			t.Fatalf("Submit with a cancelled context: %v", err)
		}
	}
	// The server still serves afterwards.
	o, err := srv.Submit(context.Background(), f)
	if err != nil || o.Version != 1 {
		t.Fatalf("Submit: %v, %v", o, err)
	}
	d, err := a.Sample(f, o, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if d.Action.GetType() == eventspb.ActionType_ACTION_TYPE_UNSPECIFIED {
		t.Fatal("sampled an unspecified action")
	}
}

// maxDiff returns the largest absolute difference between two outputs,
// over entries that are unmasked in either; an entry masked in only one
// counts as infinite. (Masked entries sit near -1e9, where float32 steps
// are 64 apart, so their exact values carry no meaning.)
func maxDiff(x, y *Output) float64 {
	d := math.Abs(float64(x.Value - y.Value))
	for _, p := range [][2][]float32{{x.TypeLogits, y.TypeLogits}, {x.ElemLogits, y.ElemLogits}, {x.CandLogits, y.CandLogits}} {
		if len(p[0]) != len(p[1]) {
			return math.Inf(1)
		}
		for i := range p[0] {
			mx, my := p[0][i] <= maskedBelow, p[1][i] <= maskedBelow
			switch {
			case mx && my:
			case mx != my:
				return math.Inf(1)
			default:
				d = math.Max(d, math.Abs(float64(p[0][i]-p[1][i])))
			}
		}
	}
	return d
}
