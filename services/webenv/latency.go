package webenv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Profile is a latency profile: the delay the server adds to each request
// and the client-side asynchronous loading the page core plays after each
// page or problem is shown (spinners, lazy content, late layout shifts), so
// that waiting for a stable page is part of the task.
type Profile struct {
	Name   string
	Server Delay
	Client ClientAsync
}

// ClientAsync configures the page core's asynchronous loading effects. Times
// are in milliseconds, drawn uniformly from [Min, Max] by the page.
type ClientAsync struct {
	Enabled bool `json:"enabled"`
	// A spinner hides the task area for a while after it is filled.
	SpinnerMinMs int `json:"spinner_min_ms"`
	SpinnerMaxMs int `json:"spinner_max_ms"`
	// Lazy parts of a page (marked data-lazy by the generators) appear late.
	LazyMinMs int `json:"lazy_min_ms"`
	LazyMaxMs int `json:"lazy_max_ms"`
	// With probability ShiftProb a banner is inserted at the top of the area
	// late, which shifts the layout down.
	ShiftProb  float64 `json:"shift_prob"`
	ShiftMinMs int     `json:"shift_min_ms"`
	ShiftMaxMs int     `json:"shift_max_ms"`
}

// webClient is the client-side loading of the "web" preset and of "+async".
var webClient = ClientAsync{
	Enabled: true, SpinnerMinMs: 150, SpinnerMaxMs: 600, LazyMinMs: 200, LazyMaxMs: 900,
	ShiftProb: 0.5, ShiftMinMs: 300, ShiftMaxMs: 1200,
}

// Delays reports whether the profile delays the server's requests.
func (p Profile) Delays() bool {
	_, none := p.Server.(NoDelay)
	return p.Server != nil && !none
}

// Delay is the distribution of the server's per-request delay.
type Delay interface {
	// Sample draws one delay.
	Sample(r *rand.Rand) time.Duration
	// Median is the distribution's median.
	Median() time.Duration
	String() string
}

// NoDelay adds nothing.
type NoDelay struct{}

func (NoDelay) Sample(*rand.Rand) time.Duration { return 0 }
func (NoDelay) Median() time.Duration           { return 0 }
func (NoDelay) String() string                  { return "none" }

// FixedDelay always adds D.
type FixedDelay struct{ D time.Duration }

func (f FixedDelay) Sample(*rand.Rand) time.Duration { return f.D }
func (f FixedDelay) Median() time.Duration           { return f.D }
func (f FixedDelay) String() string                  { return "fixed:" + f.D.String() }

// LogNormalDelay is exp(N(ln median, sigma²)).
type LogNormalDelay struct {
	Med   time.Duration
	Sigma float64
}

func (l LogNormalDelay) Sample(r *rand.Rand) time.Duration {
	return time.Duration(float64(l.Med) * math.Exp(l.Sigma*r.NormFloat64()))
}
func (l LogNormalDelay) Median() time.Duration { return l.Med }
func (l LogNormalDelay) String() string {
	return fmt.Sprintf("lognormal:%s:%g", l.Med, l.Sigma)
}

// HeavyTailDelay is a log-normal body with a Pareto tail: with probability
// TailProb the delay is Pareto(xm, Alpha) where xm = Med·e^(2σ) (the body's
// 97.7th percentile), capped at MaxDelay. The median stays close to Med (the
// tail moves it up by a few percent), the mean and the far quantiles grow as
// Alpha falls — the shape of real page-load times.
type HeavyTailDelay struct {
	Med      time.Duration
	Sigma    float64
	Alpha    float64
	TailProb float64
}

// MaxDelay caps every sampled delay, so that a heavy tail cannot stall a run.
const MaxDelay = 20 * time.Second

func (h HeavyTailDelay) Sample(r *rand.Rand) time.Duration {
	if r.Float64() < h.TailProb {
		xm := float64(h.Med) * math.Exp(2*h.Sigma)
		u := 1 - r.Float64() // (0, 1]
		d := xm / math.Pow(u, 1/h.Alpha)
		return min(time.Duration(d), MaxDelay)
	}
	return min(LogNormalDelay{Med: h.Med, Sigma: h.Sigma}.Sample(r), MaxDelay)
}
func (h HeavyTailDelay) Median() time.Duration { return h.Med }
func (h HeavyTailDelay) String() string {
	return fmt.Sprintf("heavytail:%s:%g:%g", h.Med, h.Sigma, h.Alpha)
}

// heavyDelay is the "heavy" preset's server delay: page loads of the open
// web rather than of a well-kept site. Its body's median is 800 ms, the
// bound web.dev sets for a "good" time to first byte at the 75th
// percentile (web.dev/articles/ttfb), so half of all requests are slower
// than a good site's slow quarter; 10% come from a Pareto tail of shape
// 1.3 starting at the body's 97.7th percentile (2.7 s), the power law
// measured response times follow (Mahanti et al., "A Tale of the Tails:
// Power-Laws in Internet Measurements", IEEE Network 2013), which puts
// about 2% of requests above 10 s, the order Banga and Druschel found for
// random URLs' first data (USENIX 1997: half within 1.6 s, 10% took 10 s
// or more). MaxDelay caps it.
var heavyDelay = HeavyTailDelay{Med: 800 * time.Millisecond, Sigma: 0.6, Alpha: 1.3, TailProb: 0.1}

// ParseProfile parses a profile spec:
//
//	none                       no delay, no client-side loading
//	web                        the realistic preset: heavytail:120ms:0.5:1.6+async
//	heavy                      the open web's page loads: heavytail:800ms:0.6:1.3 with a
//	                           10% tail, +async (heavyDelay says where it comes from)
//	async                      no server delay, client-side loading on
//	fixed:200ms                a fixed delay
//	lognormal:150ms:0.5        log-normal with median 150ms and sigma 0.5
//	heavytail:100ms:0.6:1.5    log-normal body (median, sigma) + Pareto tail (alpha)
//
// Any spec but none and web takes a "+async" suffix that turns the
// client-side loading on.
func ParseProfile(spec string) (Profile, error) {
	spec = strings.TrimSpace(spec)
	base, async := strings.CutSuffix(spec, "+async")
	p := Profile{Name: spec}
	switch strings.ToLower(base) {
	case "", "none":
		p.Server = NoDelay{}
		if spec == "" {
			p.Name = "none"
		}
		if async {
			p.Client = webClient
		}
		return p, nil
	case "web":
		if async {
			return Profile{}, fmt.Errorf("profile %q: web already has client-side loading", spec)
		}
		p.Server = HeavyTailDelay{Med: 120 * time.Millisecond, Sigma: 0.5, Alpha: 1.6, TailProb: 0.05}
		p.Client = webClient
		return p, nil
	case "heavy":
		if async {
			return Profile{}, fmt.Errorf("profile %q: heavy already has client-side loading", spec)
		}
		p.Server, p.Client = heavyDelay, webClient
		return p, nil
	case "async":
		p.Server, p.Client = NoDelay{}, webClient
		return p, nil
	}
	parts := strings.Split(base, ":")
	bad := func(why string) (Profile, error) {
		return Profile{}, fmt.Errorf("bad latency profile %q: %s", spec, why)
	}
	dur := func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 || d > MaxDelay {
			return 0, fmt.Errorf("bad duration %q (want e.g. 150ms, at most %s)", s, MaxDelay)
		}
		return d, nil
	}
	num := func(s string, lo, hi float64) (float64, error) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || v < lo || v > hi {
			return 0, fmt.Errorf("bad number %q (want %g..%g)", s, lo, hi)
		}
		return v, nil
	}
	// Each form is a median duration and then numbers in their ranges.
	forms := map[string]struct {
		usage  string
		ranges [][2]float64
	}{
		"fixed":     {"fixed:<duration>", nil},
		"lognormal": {"lognormal:<median>:<sigma>", [][2]float64{{0, 3}}},
		"heavytail": {"heavytail:<median>:<sigma>:<alpha>", [][2]float64{{0, 3}, {0.5, 10}}},
	}
	kind := strings.ToLower(parts[0])
	form, ok := forms[kind]
	if !ok {
		return bad("want none, web, heavy, async, fixed:…, lognormal:… or heavytail:…")
	}
	if len(parts) != 2+len(form.ranges) {
		return bad("want " + form.usage)
	}
	d, err := dur(parts[1])
	if err != nil {
		return bad(err.Error())
	}
	x := make([]float64, len(form.ranges))
	for i, r := range form.ranges {
		if x[i], err = num(parts[2+i], r[0], r[1]); err != nil {
			return bad(err.Error())
		}
	}
	switch kind {
	case "fixed":
		p.Server = FixedDelay{D: d}
	case "lognormal":
		p.Server = LogNormalDelay{Med: d, Sigma: x[0]}
	case "heavytail":
		p.Server = HeavyTailDelay{Med: d, Sigma: x[0], Alpha: x[1], TailProb: 0.05}
	}
	if async {
		p.Client = webClient
	}
	return p, nil
}

// delaySampler draws delays from a profile with its own seeded generator,
// safe for concurrent requests.
type delaySampler struct {
	mu sync.Mutex
	r  *rand.Rand
	d  Delay
}

func newDelaySampler(d Delay, seed uint64) *delaySampler {
	return &delaySampler{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), d: d}
}

func (s *delaySampler) sample() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.d.Sample(s.r)
}
