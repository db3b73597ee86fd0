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
}

// WithSettler sets the settler (default DOMQuiet{Quiet: 100ms, Timeout: 5s}).
func WithSettler(s Settler) Option { return func(c *config) { c.settler = s } }

// WithScreenshots turns the observation's screenshot on or off (default on).
func WithScreenshots(on bool) Option { return func(c *config) { c.screenshots = on } }

// WithShaping sets the shaping terms added to the reward (default none: the
// reward is 1 when an episode ends in success, else 0).
func WithShaping(s webenv.Shaping) Option { return func(c *config) { c.shaping = s } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }
