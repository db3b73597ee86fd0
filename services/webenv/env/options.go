package env

import (
	"log/slog"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// Option configures an Env.
type Option func(*config)

type config struct {
	settler  Settler
	viewport catalog.Size
	// defViewport: the viewport of pages that declare none (default
	// 160x210, the MiniWoB area).
	defViewport catalog.Size
	// scale: the device scale factor of screenshots (default 1:
	// one screenshot pixel per CSS pixel).
	scale       float64
	screenshots bool
	shaping     webenv.Shaping
	// readyTimeout: the bound on the wait for WOB_TASK_READY after a reset
	// (default 20s, above the longest delay a latency profile draws).
	readyTimeout time.Duration
	// actionTimeout: the bound on one action's browser calls (default 30s).
	actionTimeout time.Duration
	log           *slog.Logger
	tabOpts       []chromedp.ContextOption // WithTabOptions (hooks.go)
	// requestPerAction: WithRequestPerAction.
	requestPerAction bool
	// miniwobTimeLimit: WithMiniWoBTimeLimit (0: the page's own).
	miniwobTimeLimit time.Duration
}

// WithMiniWoBTimeLimit sets core.EPISODE_MAX_TIME of every MiniWoB++
// episode to d before it starts (default 0: the page's own limit, 10 s for
// most tasks, 7-60 s for some, as the published tables ran them). The
// limit runs in real time while the policy decides, so a policy that takes
// seconds a step (a language model on a CPU) times out where a fast one
// does not; BrowserGym runs MiniWoB++ for language-model agents with the
// limit at 10^6 ms (NoMiniWoBTimeLimit). The time-decayed reward divides
// by the limit too. Built-in pages keep their family's limit.
func WithMiniWoBTimeLimit(d time.Duration) Option {
	return func(c *config) { c.miniwobTimeLimit = max(d, 0) }
}

// NoMiniWoBTimeLimit is BrowserGym's MiniWoB++ time limit, 10^6 ms: in
// effect none.
const NoMiniWoBTimeLimit = 1000 * time.Second

// WithRequestPerAction makes every reset and action on a MiniWoB++ page
// wait for one request to the task server (GET /api/wait), as a page that
// loads its next state from a server does (default off). MiniWoB++'s pages
// make no request once loaded, and the env starts each episode on the page
// already open, so without it a server's latency profile never reaches
// them; with it the profile means the same on both suites. The reset's
// request comes before the episode starts; an action's after the action,
// before the page is observed, while the page's clock runs.
func WithRequestPerAction(on bool) Option { return func(c *config) { c.requestPerAction = on } }

// WithSettler sets the settler (default DOMQuiet{Quiet: 100ms, Timeout: 5s}).
func WithSettler(s Settler) Option { return func(c *config) { c.settler = s } }

// WithScreenshots turns the observation's screenshot on or off (default on).
func WithScreenshots(on bool) Option { return func(c *config) { c.screenshots = on } }

// WithShaping sets the shaping terms added to the reward (default none: the
// reward is 1 when an episode ends in success, else 0).
func WithShaping(s webenv.Shaping) Option { return func(c *config) { c.shaping = s } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }
