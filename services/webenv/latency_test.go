package webenv

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

func TestParseProfile(t *testing.T) {
	cases := []struct {
		spec   string
		median time.Duration
		kind   string
		async  bool
	}{
		{"none", 0, "none", false},
		{"", 0, "none", false},
		{"web", 120 * time.Millisecond, "heavytail", true},
		{"heavy", 800 * time.Millisecond, "heavytail", true},
		{"async", 0, "none", true},
		{"fixed:200ms", 200 * time.Millisecond, "fixed", false},
		{"lognormal:150ms:0.5", 150 * time.Millisecond, "lognormal", false},
		{"heavytail:100ms:0.6:1.5", 100 * time.Millisecond, "heavytail", false},
		{"fixed:40ms+async", 40 * time.Millisecond, "fixed", true},
	}
	for _, c := range cases {
		p, err := ParseProfile(c.spec)
		if err != nil {
			t.Errorf("%q: %v", c.spec, err)
			continue
		}
		if p.Server.Median() != c.median || !strings.HasPrefix(p.Server.String(), c.kind) || p.Client.Enabled != c.async {
			t.Errorf("%q: got %s median %s async %v", c.spec, p.Server, p.Server.Median(), p.Client.Enabled)
		}
	}
	for _, bad := range []string{"fast", "fixed", "fixed:abc", "fixed:-5ms", "fixed:1h", "lognormal:100ms", "lognormal:100ms:x",
		"lognormal:100ms:-1", "heavytail:100ms:0.5", "heavytail:100ms:0.5:0", "web+async", "heavy+async", "fixed:1ms:2ms", "lognormal:100ms:NaN"} {
		if _, err := ParseProfile(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

func sampleMedian(d Delay, n int) time.Duration {
	r := rand.New(rand.NewPCG(7, 11))
	xs := make([]time.Duration, n)
	for i := range xs {
		xs[i] = d.Sample(r)
	}
	slices.Sort(xs)
	return xs[n/2]
}

func TestDelayDistributions(t *testing.T) {
	ln := LogNormalDelay{Med: 100 * time.Millisecond, Sigma: 0.5}
	if m := sampleMedian(ln, 20001); math.Abs(float64(m-ln.Med))/float64(ln.Med) > 0.03 {
		t.Errorf("lognormal median %s, want ~%s", m, ln.Med)
	}
	ht := HeavyTailDelay{Med: 100 * time.Millisecond, Sigma: 0.5, Alpha: 1.5, TailProb: 0.05}
	if m := sampleMedian(ht, 20001); math.Abs(float64(m-ht.Med))/float64(ht.Med) > 0.10 {
		t.Errorf("heavytail median %s, want within 10%% of %s", m, ht.Med)
	}
	// The tail is heavy: the 99.5th percentile is far above the body's.
	r := rand.New(rand.NewPCG(1, 2))
	var xs []time.Duration
	for range 20000 {
		xs = append(xs, ht.Sample(r))
	}
	slices.Sort(xs)
	if p995 := xs[len(xs)*995/1000]; p995 < 5*ht.Med || p995 > MaxDelay {
		t.Errorf("heavytail p99.5 %s", p995)
	}
}

// TestLatencyProfileMedianOverHTTP sends real HTTP requests to a listening
// server and reads, from each response's Server-Timing header, the delay the
// server applied to it (drawn from the profile, then waited for). The median
// of the applied delays must match the profile's median within 10%: a
// statement about the configured distribution, not about machine speed. That
// the server really waited is checked as a lower bound only (the wait is
// never shorter than the delay); the measured waits and the client-side
// round trips minus a same-run baseline are logged.
func TestLatencyProfileMedianOverHTTP(t *testing.T) {
	for _, c := range []struct {
		spec string
		n    int
	}{{"lognormal:80ms:0.5", 1201}, {"fixed:60ms", 201}} {
		t.Run(c.spec, func(t *testing.T) {
			prof, err := ParseProfile(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			m := measure(t, prof, c.n)
			base := measure(t, Profile{Name: "none", Server: NoDelay{}}, 101)
			want := prof.Server.Median()
			got := median(m.applied)
			t.Logf("%s: applied median %s (want %s); measured wait median %s; client median %s, baseline %s, client minus baseline %s",
				c.spec, got, want, median(m.waited), median(m.client), median(base.client), median(m.client)-median(base.client))
			if rel := math.Abs(float64(got-want)) / float64(want); rel > 0.10 {
				t.Errorf("applied median %s is %.1f%% off the configured %s", got, 100*rel, want)
			}
			for i := range m.applied {
				if m.waited[i] < m.applied[i]-time.Millisecond {
					t.Errorf("request %d: waited %s, less than its delay %s", i, m.waited[i], m.applied[i])
					break
				}
			}
		})
	}
}

func median(xs []time.Duration) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

type measured struct {
	applied, waited, client []time.Duration
}

// serverTiming reads one Server-Timing entry's duration.
func serverTiming(h string, name string) (time.Duration, bool) {
	for _, part := range strings.Split(h, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), name+";dur="); ok {
			ms, err := strconv.ParseFloat(v, 64)
			return time.Duration(ms * float64(time.Millisecond)), err == nil
		}
	}
	return 0, false
}

// measure sends n requests, 40 at a time. With 1201 draws of sigma 0.5, the
// sample median's spread is about 2%, far inside the 10% bound.
func measure(t *testing.T, prof Profile, n int) measured {
	t.Helper()
	s, err := New(WithProfile(prof), WithLatencySeed(42), WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	var mu sync.Mutex
	var m measured
	var wg sync.WaitGroup
	sem := make(chan struct{}, 40)
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t0 := time.Now()
			resp, err := http.Get(s.URL() + "/api/tasks/click-button/" + catalog.SitesOf("click-button", catalog.SplitTrain)[0] + "/1")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			rt := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			m.client = append(m.client, rt)
			h := resp.Header.Get(DelayHeader)
			d, ok1 := serverTiming(h, "wobdelay")
			w, ok2 := serverTiming(h, "wobwait")
			if ok1 && ok2 {
				m.applied = append(m.applied, d)
				m.waited = append(m.waited, w)
			}
		}()
	}
	wg.Wait()
	if _, none := prof.Server.(NoDelay); !none && len(m.applied) != n {
		t.Fatalf("%d of %d responses carry the delay in %s", len(m.applied), n, DelayHeader)
	}
	return m
}

// TestProfileDelays: only a server delay turns the actors' request per
// action on; client-side loading alone makes no request slower.
func TestProfileDelays(t *testing.T) {
	for spec, want := range map[string]bool{"none": false, "": false, "async": false, "none+async": false, "web": true, "heavy": true, "fixed:0s": true, "fixed:10ms": true} {
		p, err := ParseProfile(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Delays(); got != want {
			t.Errorf("%q: Delays() = %v, want %v", spec, got, want)
		}
	}
}
