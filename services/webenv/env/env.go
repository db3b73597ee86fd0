package env

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

//go:embed js/agent.js
var agentJS string

// Env drives one tab. It is not safe for concurrent use; run one Env per
// goroutine (tabs of one Browser run in parallel).
type Env struct {
	cfg    config
	base   *url.URL
	tabCtx context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	loading map[cdp.FrameID]bool

	// The episode.
	task   TaskRef
	active bool
	done   bool
	// viewport: a forced viewport (default: the size the page declares in
	// <meta name="wob-viewport">, else defViewport).
	viewport   catalog.Size
	lastScore  *webenv.Score
	lastAction string
	lastGroups []string
	// lastPotential is instructionPotential of the last observation of a
	// page without a rubric (MiniWoB++), the Progress term's previous value.
	lastPotential float64
	messages      []string

	// clipMu is the browser's clipboard lock; clip the text this tab last
	// copied or cut, when hasClip (clipboard.go).
	clipMu  *sync.Mutex
	clip    string
	hasClip bool
}

// New opens a tab of b for tasks served at baseURL (a webenv server).
func New(ctx context.Context, b *Browser, baseURL string, opts ...Option) (*Env, error) {
	base, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") {
		return nil, fmt.Errorf("unable to use base URL %q: want http(s)://host:port", baseURL)
	}
	cfg := config{
		settler:       DOMQuiet{Quiet: 100 * time.Millisecond, Timeout: 5 * time.Second},
		defViewport:   catalog.Size{W: 160, H: 210},
		scale:         1,
		screenshots:   true,
		readyTimeout:  20 * time.Second,
		actionTimeout: 30 * time.Second,
		log:           slog.Default(),
	}
	for _, o := range opts {
		o(&cfg)
	}
	e := &Env{cfg: cfg, base: base, loading: map[cdp.FrameID]bool{}, clipMu: &b.clip}
	e.tabCtx, e.cancel = chromedp.NewContext(b.ctx, append([]chromedp.ContextOption{chromedp.WithListener(e.onEvent)}, cfg.tabOpts...)...)
	c, cancel := e.bind(ctx)
	defer cancel()
	setup := []error{chromedp.Do(e.tabCtx)} // opens the tab, bound to the tab's own context
	if setup[0] == nil {
		_, err1 := chromedp.Call(c, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		_, err2 := chromedp.Call(c, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: agentJS})
		// The env reads the page with JavaScript only: chromedp's DOM and CSS
		// tracking would stream every change of the page to us for nothing.
		_, err3 := chromedp.Call(c, css.Disable, cdp.Empty{})
		_, err4 := chromedp.Call(c, dom.Disable, cdp.Empty{})
		// A page's service worker outlives its episode in the tab's browser
		// context and could answer the next episode's pages (a forged task
		// page, a forged score): the tab's requests skip every service
		// worker, so the server always answers them.
		_, err5 := chromedp.Call(c, network.SetBypassServiceWorker, network.SetBypassServiceWorkerParams{Bypass: true})
		setup = append(setup, err1, err2, err3, err4, err5, e.setViewport(c, cfg.defViewport))
	}
	if err := errors.Join(setup...); err != nil {
		e.cancel()
		return nil, fmt.Errorf("unable to open a tab: %w", err)
	}
	return e, nil
}

// Close closes the tab.
func (e *Env) Close() error {
	e.cancel()
	return nil
}

// onEvent runs in the tab's event loop: it must not block or call the
// browser synchronously.
func (e *Env) onEvent(ev any) {
	switch ev := ev.(type) {
	case *page.EventFrameStartedLoading:
		e.mu.Lock()
		e.loading[ev.FrameID] = true
		e.mu.Unlock()
	case *page.EventFrameStoppedLoading:
		e.mu.Lock()
		delete(e.loading, ev.FrameID)
		e.mu.Unlock()
	case *page.EventFrameDetached:
		e.mu.Lock()
		delete(e.loading, ev.FrameID)
		e.mu.Unlock()
	case *page.EventJavascriptDialogOpening:
		// An open dialog blocks the page: dismiss it (accept, as a user
		// clicking OK would).
		go func() {
			c, cancel := context.WithTimeout(e.tabCtx, 5*time.Second)
			defer cancel()
			if _, err := chromedp.Call(c, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true}); err != nil {
				e.cfg.log.Debug("unable to dismiss dialog", "err", err)
			}
		}()
	}
}

// Loading implements Page.
func (e *Env) Loading() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.loading) > 0
}

// bind derives a context of the tab that ends with ctx (and its deadline).
func (e *Env) bind(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(e.tabCtx)
	if d, ok := ctx.Deadline(); ok {
		var cancel2 context.CancelFunc
		c, cancel2 = context.WithDeadline(c, d)
		prev := cancel
		cancel = func() { cancel2(); prev() }
	}
	stop := context.AfterFunc(ctx, cancel)
	return c, func() { stop(); cancel() }
}

// tabPage is the Page view of the env that a settler gets.
type tabPage struct {
	e *Env
}

func (p tabPage) Eval(ctx context.Context, js string, out any) error { return p.e.eval(ctx, js, out) }
func (p tabPage) Screenshot(ctx context.Context) ([]byte, error)     { return p.e.screenshot(ctx) }
func (p tabPage) Loading() bool                                      { return p.e.Loading() }

// eval evaluates js; when the env's helper is missing from the document (a
// document created before the tab's setup), it installs it and retries.
func (e *Env) eval(ctx context.Context, js string, out any) error {
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
	if err != nil {
		var exc *chromedp.ExceptionError
		if errors.As(err, &exc) && strings.Contains(js, "__wob") {
			if has, herr := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof window.__wob === 'object'`)); herr == nil && !has {
				if _, ierr := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](agentJS)); ierr == nil {
					raw, err = chromedp.Run(ctx, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
				}
			}
		}
		if err != nil {
			return jsError(err)
		}
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("unable to decode %s: %w", clip(js, 40), err)
	}
	return nil
}

// jsError turns a page exception into an error with its message only.
func jsError(err error) error {
	var exc *chromedp.ExceptionError
	if errors.As(err, &exc) && exc.ExceptionDetails != nil {
		msg := exc.Text
		if exc.Exception != nil && exc.Exception.Description != "" {
			msg = exc.Exception.Description
		}
		msg, _, _ = strings.Cut(msg, "\n")
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, "Uncaught "), "Error: ")
		return errors.New(msg)
	}
	return err
}
