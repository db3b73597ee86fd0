package env

import (
	"context"
	"fmt"
	"os"

	"github.com/chromedp/chromedp"
)

// Hooks for the actor's browser pool: what it needs to isolate, police and
// supervise the tabs and processes that the env drives.

// WithTabOptions adds chromedp context options to the env's tab, e.g.
// chromedp.WithNewBrowserContext() for an isolated browser context (default:
// none, a tab of the browser's default context).
func WithTabOptions(opts ...chromedp.ContextOption) Option {
	return func(c *config) { c.tabOpts = append(c.tabOpts, opts...) }
}

// TabContext returns the chromedp context of the env's tab, for callers that
// add their own DevTools listeners or domains (request interception). It
// ends when the env is closed or the browser goes away.
func (e *Env) TabContext() context.Context { return e.tabCtx }

// Resettle waits for the page to settle again without acting, then observes
// it: for an observation that came back unstable (the settler's timeout) on
// which no decision may be taken. done reports that the page's episode has
// ended meanwhile (a task time-out).
func (e *Env) Resettle(ctx context.Context) (obs *Observation, done bool, err error) {
	if !e.active {
		return nil, false, fmt.Errorf("unable to resettle: no episode (call Reset first)")
	}
	c, cancel := e.bind(ctx)
	defer cancel()
	settled, err := e.cfg.settler.Settle(c, tabPage{e})
	if err != nil {
		return nil, false, fmt.Errorf("unable to settle: %w", err)
	}
	obs, st, err := e.observe(c, settled)
	if err != nil {
		return nil, false, err
	}
	e.done = e.done || st.Done
	return obs, e.done, nil
}

// WithAllocatorOption adds a chromedp exec allocator option to the launch
// (default: only the launcher's flags). Not chromedp.ModifyCmdFunc: the
// launcher's own replaces it; use WithCmdModifier.
func WithAllocatorOption(o chromedp.ExecAllocatorOption) BrowserOption {
	return func(c *browserConfig) { c.extra = append(c.extra, o) }
}

// Context returns the browser's root chromedp context (browser-level
// DevTools calls, Browser.LostConnection).
func (b *Browser) Context() context.Context { return b.ctx }

// Process returns the browser's main process (nil when chromedp did not
// start it).
func (b *Browser) Process() *os.Process {
	if c := chromedp.FromContext(b.ctx); c != nil && c.Browser != nil {
		return c.Browser.Process()
	}
	return nil
}

// Lost returns a channel that is closed when the connection to the browser
// drops (the process died or was killed); nil before the browser started.
func (b *Browser) Lost() <-chan struct{} {
	if c := chromedp.FromContext(b.ctx); c != nil && c.Browser != nil {
		return c.Browser.LostConnection
	}
	return nil
}

// DataDir returns the browser's user-data dir: every process of this
// browser carries it as --user-data-dir on its command line.
func (b *Browser) DataDir() string { return b.dataDir }
