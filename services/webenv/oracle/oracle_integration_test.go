package oracle

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// Knobs of the integration runs, from the environment, so that the closing
// table can be regenerated at other sizes:
//
//	WEBENV_ORACLE_SEEDS     oracle seeds per split and family (default 10: 10 on
//	                        train sites + 10 on the test site = 20 per family)
//	WEBENV_RANDOM_EPISODES  random-policy episodes per family (default 10; the
//	                        closing table is from a run with 20)
//	WEBENV_TABS             tabs of the one Chromium (default 4)
func knob(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

var oracleSettler = Settler()

type rig struct {
	srv *webenv.Server
	b   *env.Browser
}

func newRig(t *testing.T, opts ...webenv.Option) *rig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := webenv.New(append([]webenv.Option{webenv.WithSplit(catalog.SplitAll), webenv.WithLogger(quiet)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	b, err := env.LaunchBrowser(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return &rig{srv: srv, b: b}
}

func (r *rig) env(t *testing.T, opts ...env.Option) *env.Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := env.New(ctx, r.b, r.srv.URL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

type job struct {
	task   env.TaskRef
	tier   catalog.Tier
	random bool
	test   bool // the task's site is in the test split
}

type tally struct {
	oracleTrain, oracleTest, oracleN int
	oracleSteps                      int
	failures                         []string
	randomOK, randomN                int
	randomPartial                    float64
	randomSteps                      int
}

// TestIntegrationOracleAndRandom runs the oracle on every family, on train
// and test sites, and the random policy, over a few tabs of one Chromium, and
// prints the per-family table. Regenerate it with
//
//	WEBENV_RANDOM_EPISODES=20 go test -run TestIntegrationOracleAndRandom -v ./services/webenv/oracle/
func TestIntegrationOracleAndRandom(t *testing.T) {
	seeds := knob("WEBENV_ORACLE_SEEDS", 10)
	randoms := knob("WEBENV_RANDOM_EPISODES", 10)
	tabs := knob("WEBENV_TABS", 4)
	r := newRig(t)
	fams := catalog.Families()

	// A batch is the jobs of one (family, site, policy): a tab runs it in a
	// row, so that single-page tasks restart on the open page, as the
	// MiniWoB harnesses do.
	batches := map[string][]job{}
	var order []string
	add := func(j job) {
		k := fmt.Sprintf("%s/%s/%v", j.task.Family, j.task.Site, j.random)
		if _, ok := batches[k]; !ok {
			order = append(order, k)
		}
		batches[k] = append(batches[k], j)
	}
	for _, f := range fams {
		train := catalog.SitesOf(f.Name, catalog.SplitTrain)
		test := catalog.TestSite(f.Name)
		for i := range seeds {
			add(job{task: env.TaskRef{Family: f.Name, Site: train[i%len(train)], Seed: int64(i)}, tier: f.Tier})
			add(job{task: env.TaskRef{Family: f.Name, Site: test, Seed: int64(100 + i)}, tier: f.Tier, test: true})
		}
		for i := range randoms {
			site := catalog.Sites[i%len(catalog.Sites)].Name
			add(job{task: env.TaskRef{Family: f.Name, Site: site, Seed: int64(1000 + i)}, tier: f.Tier, random: true})
		}
	}
	// Long batches first, so that the tabs finish together.
	slices.SortStableFunc(order, func(a, b string) int {
		return int(batches[b][0].tier)*len(batches[b]) - int(batches[a][0].tier)*len(batches[a])
	})

	var mu sync.Mutex
	tallies := map[string]*tally{}
	for _, f := range fams {
		tallies[f.Name] = &tally{}
	}
	queue := make(chan []job)
	var wg sync.WaitGroup
	start := time.Now()
	shots := 0
	for w := range tabs {
		// Demonstrations carry screenshots; taking them on one tab checks
		// that, and spares the loaded test machine the rest.
		oe := r.env(t, env.WithSettler(oracleSettler), env.WithScreenshots(w == 0))
		re := r.env(t, env.WithSettler(env.DOMQuiet{Quiet: 5 * time.Millisecond, Poll: 5 * time.Millisecond, Timeout: 10 * time.Second, PageHints: true}), env.WithScreenshots(false))
		policy := NewRandom(uint64(w + 1))
		runJob := func(j job) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			if j.random {
				d, err := RunRandom(ctx, re, j.task, StepCap(j.tier), policy)
				mu.Lock()
				tl := tallies[j.task.Family]
				if err != nil {
					tl.failures = append(tl.failures, fmt.Sprintf("random %+v: %v", j.task, err))
				} else {
					tl.randomN++
					tl.randomSteps += len(d.Steps)
					tl.randomPartial += d.Partial
					if d.Success {
						tl.randomOK++
					}
				}
				mu.Unlock()
			} else {
				d, err := Solve(ctx, oe, j.task)
				mu.Lock()
				tl := tallies[j.task.Family]
				tl.oracleN++
				switch {
				case err != nil:
					tl.failures = append(tl.failures, fmt.Sprintf("oracle %+v: %v", j.task, err))
				case !d.Success:
					tl.failures = append(tl.failures, fmt.Sprintf("oracle %+v: no success: %s", j.task, d.Reason))
				case j.test:
					tl.oracleTest++
				default:
					tl.oracleTrain++
				}
				if d != nil {
					tl.oracleSteps += len(d.Steps)
					if w == 0 && err == nil && len(d.Steps) > 0 {
						if png := d.Steps[0].Obs.Screenshot; len(png) < 8 || string(png[1:4]) != "PNG" {
							tl.failures = append(tl.failures, fmt.Sprintf("oracle %+v: the demonstration has no PNG screenshot", j.task))
						}
						shots++
					}
				}
				mu.Unlock()
			}
			cancel()
		}
		wg.Go(func() {
			for batch := range queue {
				for _, j := range batch {
					runJob(j)
				}
			}
		})
	}
	for _, k := range order {
		queue <- batches[k]
	}
	close(queue)
	wg.Wait()
	elapsed := time.Since(start)

	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "family\ttier\toracle train\toracle test\toracle steps\trandom success\trandom partial\trandom steps\t\n")
	var oracleAll, oracleOK, randAll, randOK int
	for _, f := range fams {
		tl := tallies[f.Name]
		oracleAll += tl.oracleN
		oracleOK += tl.oracleTrain + tl.oracleTest
		randAll += tl.randomN
		randOK += tl.randomOK
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d/%d\t%.1f\t%d/%d (%.0f%%)\t%.2f\t%.1f\t\n", f.Name, f.Tier,
			tl.oracleTrain, seeds, tl.oracleTest, seeds, ratio(tl.oracleSteps, tl.oracleN),
			tl.randomOK, tl.randomN, 100*ratio(tl.randomOK, tl.randomN), tl.randomPartial/float64(max(tl.randomN, 1)), ratio(tl.randomSteps, tl.randomN))
	}
	tw.Flush()
	t.Logf("oracle and random policy per family (%d tabs, %s; random step caps: easy %d, medium %d, hard %d):\n%s"+
		"oracle: %d/%d episodes succeeded; random: %d/%d (%.1f%%)",
		tabs, elapsed.Round(time.Second), StepCap(catalog.Easy), StepCap(catalog.Medium), StepCap(catalog.Hard), b.String(),
		oracleOK, oracleAll, randOK, randAll, 100*ratio(randOK, randAll))

	if shots == 0 {
		t.Error("no demonstration with screenshots was checked")
	}
	for _, f := range fams {
		tl := tallies[f.Name]
		for _, msg := range tl.failures {
			t.Errorf("%s: %s", f.Name, msg)
		}
		if tl.oracleTrain < seeds || tl.oracleTest < seeds {
			t.Errorf("%s: the oracle succeeded on %d train and %d test seeds, want %d each", f.Name, tl.oracleTrain, tl.oracleTest, seeds)
		}
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// TestIntegrationOracleUnderWebLatency runs the oracle once per family on a
// server with the realistic "web" profile: heavy-tailed server delays,
// spinners, lazy content and late layout shifts.
func TestIntegrationOracleUnderWebLatency(t *testing.T) {
	prof, err := webenv.ParseProfile("web")
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, webenv.WithProfile(prof), webenv.WithLatencySeed(7))
	tabs := knob("WEBENV_TABS", 4)
	fams := catalog.Families()
	queue := make(chan env.TaskRef)
	var mu sync.Mutex
	var failures []string
	var unstable, frames int
	var wg sync.WaitGroup
	for range tabs {
		e := r.env(t, env.WithSettler(oracleSettler), env.WithScreenshots(false))
		wg.Go(func() {
			for task := range queue {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				d, err := Solve(ctx, e, task)
				cancel()
				mu.Lock()
				if err != nil {
					failures = append(failures, fmt.Sprintf("%+v: %v", task, err))
				} else if !d.Success {
					failures = append(failures, fmt.Sprintf("%+v: %s", task, d.Reason))
				}
				if d != nil {
					for _, s := range d.Steps {
						frames++
						if !s.Obs.Stable {
							unstable++
						}
					}
				}
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	for i, f := range fams {
		queue <- env.TaskRef{Family: f.Name, Site: catalog.Sites[i%len(catalog.Sites)].Name, Seed: int64(500 + i)}
	}
	close(queue)
	wg.Wait()
	t.Logf("web profile: %d families in %s, %d of %d frames unstable at the settler's timeout", len(fams), time.Since(start).Round(time.Second), unstable, frames)
	for _, f := range failures {
		t.Error(f)
	}
}
