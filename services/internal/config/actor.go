package config

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// ActorModes are the modes an actor target runs (the values of actor.Mode
// less raw, which only the rollout bench asks for).
var ActorModes = []string{"async", "sync", "sync-step"}

// Actor configures the actor target.
type Actor struct {
	// Executors is the number of browser executors (isolated contexts).
	Executors int
	// Browsers is the number of Chromium processes; 0 means one per 4
	// executors.
	Browsers int
	// Mode is "async" (each executor on its own), "sync" (the strict
	// baseline: lock-step batches of episodes) or "sync-step" (lock-step
	// rounds, episodes restart independently).
	Mode string
	// AllowedOrigins are the origins tabs may load from; empty means the
	// webenv origin only.
	AllowedOrigins []string
	// FrameStore keeps full-resolution screenshots in RunDir/frames.
	FrameStore bool
	// PolicyName is the weights key the actor acts with.
	PolicyName string
	// Shaping is webenv's dense reward spec: off, on, or term=weight,...
	Shaping string
	// BrowserNice is the nice value of every Chromium thread.
	BrowserNice int
	// CrashRetries is how many times the task of an episode a crashed
	// browser or lost tab cut short runs again (default 2; 0 drops them).
	CrashRetries int
	// BrowserSandbox is how Chromium is isolated: auto (as root, an
	// unprivileged user with Chromium's sandbox) or off (--no-sandbox).
	BrowserSandbox string
	// BrowserPath is the Chromium binary; "" picks the headless shell when
	// it is installed, else Chromium (env.DefaultExecPath).
	BrowserPath string
	// BrowserFlags are extra Chromium switches, name or name=value; a
	// switch named with a leading "no-" removes the default of that name
	// (no-disable-gpu-vsync).
	BrowserFlags []string
	// MiniWoBTimeLimit is every MiniWoB++ episode's time limit: 0 the
	// page's own (-miniwob-time-limit=page, the default), else the
	// duration (off: env.NoMiniWoBTimeLimit, BrowserGym's 10^6 ms).
	MiniWoBTimeLimit time.Duration

	allowed   string
	timeLimit string
	flags     string
}

// Webenv configures the webenv target.
type Webenv struct {
	// LatencyProfile is webenv's latency profile spec (none, web, ...).
	LatencyProfile string
	// Split is the sites served: train, test or all. The local stack
	// serves all so that the scheduler can evaluate on held-out sites;
	// the learner never trains on them.
	Split string
	// MiniWoBDir is the MiniWoB++ html tree served for -suite=miniwob or
	// all; empty means <run-dir>/miniwob/html, where infra/setup.sh
	// unpacks it.
	MiniWoBDir string
}

func (a *Actor) register(fs *flag.FlagSet) {
	fs.IntVar(&a.Executors, "executors", 4, "actor: browser executors, one isolated browser context each (env "+envName("executors")+")")
	fs.IntVar(&a.Browsers, "browsers", 0, "actor: Chromium processes the executors share; 0 = one per 4 executors (env "+envName("browsers")+")")
	fs.StringVar(&a.Mode, "actor-mode", "async", "actor: async; sync for the strict baseline (lock-step batches of episodes); sync-step for lock-step rounds whose episodes restart independently (env "+envName("actor-mode")+")")
	fs.StringVar(&a.allowed, "allowed-origins", "", "actor: comma list of origins tabs may load from; empty = the webenv origin (env "+envName("allowed-origins")+")")
	fs.BoolVar(&a.FrameStore, "frame-store", false, "actor: keep full-resolution screenshots in <run-dir>/frames, events carry the hash (env "+envName("frame-store")+")")
	fs.StringVar(&a.BrowserPath, "browser-path", "", "actor: Chromium binary; empty = /usr/lib/chromium/chromium-headless-shell when installed, else /usr/lib/chromium/chromium (env "+envName("browser-path")+")")
	fs.StringVar(&a.flags, "browser-flags", "", "actor: extra Chromium switches, comma list of name or name=value; no-NAME removes a default switch (env "+envName("browser-flags")+")")
	fs.IntVar(&a.CrashRetries, "crash-retries", 2, "actor: times the task of an episode cut by a crashed browser or lost tab runs again on a fresh tab (same family, site and seed; each attempt its own episode); 0 = drop it (env "+envName("crash-retries")+")")
	fs.StringVar(&a.BrowserSandbox, "browser-sandbox", "auto", "actor: browser isolation: auto (as root, Chromium runs as uid 65534 with its own sandbox when user namespaces work, else as uid 65534 without it; said at start) or off (--no-sandbox as this user, the behaviour before 12-05) (env "+envName("browser-sandbox")+")")
	fs.IntVar(&a.BrowserNice, "browser-nice", 10, "actor: nice value of every Chromium thread, so the learner and joiner get CPU first; 0 keeps Chromium's own (env "+envName("browser-nice")+")")
	fs.StringVar(&a.Shaping, "shaping", "on", "actor: dense reward shaping: off, on, or progress=0.5,subgoal=0.1,noop=0.05,repeat=0.05 (env "+envName("shaping")+")")
	fs.StringVar(&a.timeLimit, "miniwob-time-limit", "page", "actor: MiniWoB++ episode time limit: page (each page's own, 10s for most, as the published tables ran them), off (BrowserGym's protocol for language-model agents: 10^6 ms, so a policy that thinks for seconds is not timed out), or a duration such as 60s (env "+envName("miniwob-time-limit")+")")
	fs.StringVar(&a.PolicyName, "policy-name", "default", "actor: the policy to act with, the key of the weights topic (env "+envName("policy-name")+")")
}

// validate checks the flags; a Config built by hand (zero values) gets the
// flag defaults.
func (a *Actor) validate() error {
	a.AllowedOrigins = SplitList(a.allowed)
	if a.flags != "" {
		a.BrowserFlags = SplitList(a.flags)
	}
	if a.Executors == 0 {
		a.Executors = 4
	}
	if a.Mode == "" {
		a.Mode = "async"
	}
	if a.PolicyName == "" {
		a.PolicyName = "default"
	}
	limit, err := ParseMiniWoBTimeLimit(a.timeLimit)
	if err != nil {
		return err
	}
	if a.timeLimit != "" {
		a.MiniWoBTimeLimit = limit
	}
	a.Mode = strings.ToLower(strings.TrimSpace(a.Mode))
	if err := oneOf("-actor-mode", a.Mode, ActorModes...); err != nil {
		return err
	}
	if a.BrowserSandbox == "" {
		a.BrowserSandbox = "auto"
	}
	if err := oneOf("-browser-sandbox", a.BrowserSandbox, "auto", "off"); err != nil {
		return err
	}
	switch {
	case a.Executors < 1 || a.Executors > 256:
		return fmt.Errorf("invalid -executors %d: want 1..256", a.Executors)
	case a.Browsers < 0 || a.Browsers > a.Executors:
		return fmt.Errorf("invalid -browsers %d: want 0..executors (%d)", a.Browsers, a.Executors)
	case a.CrashRetries < 0:
		return fmt.Errorf("invalid -crash-retries %d: want 0 or more", a.CrashRetries)
	case a.BrowserNice < -20 || a.BrowserNice > 19:
		return fmt.Errorf("invalid -browser-nice %d: want -20..19", a.BrowserNice)
	}
	return nil
}

func (w *Webenv) register(fs *flag.FlagSet) {
	fs.StringVar(&w.Split, "webenv-split", "all", "webenv: sites served: train, test or all (held-out test sites are evaluated, never trained on) (env "+envName("webenv-split")+")")
	fs.StringVar(&w.MiniWoBDir, "miniwob-dir", "", "webenv: the MiniWoB++ html tree served for -suite=miniwob or all; empty = <run-dir>/miniwob/html, filled by make setup (env "+envName("miniwob-dir")+")")
	fs.StringVar(&w.LatencyProfile, "latency-profile", "none", "webenv: latency profile: none, web, heavy, async, fixed:200ms, lognormal:150ms:0.5, heavytail:100ms:0.6:1.5 (+async) (env "+envName("latency-profile")+")")
}

// noMiniWoBTimeLimit is env.NoMiniWoBTimeLimit (BrowserGym's 10^6 ms),
// which config does not import.
const noMiniWoBTimeLimit = 1000 * time.Second

// ParseMiniWoBTimeLimit parses -miniwob-time-limit: "page" or "" (0: each
// page's own), "off" (10^6 ms), or a positive duration.
func ParseMiniWoBTimeLimit(s string) (time.Duration, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "", "page":
		return 0, nil
	case "off", "none":
		return noMiniWoBTimeLimit, nil
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("invalid -miniwob-time-limit %q: want page, off or a positive duration (60s)", s)
		}
		return d, nil
	}
}

// MiniWoBTimeLimitName says a limit as -miniwob-time-limit takes it.
func MiniWoBTimeLimitName(d time.Duration) string {
	switch d {
	case 0:
		return "page"
	case noMiniWoBTimeLimit:
		return "off"
	}
	return d.String()
}
