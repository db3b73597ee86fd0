package env

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// optimizeForSpeed trades PNG size for encoding time: screenshots are taken
// every step.
var optimizeForSpeed = true

func (e *Env) screenshot(ctx context.Context) ([]byte, error) {
	res, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, OptimizeForSpeed: &optimizeForSpeed})
	if err != nil {
		return nil, fmt.Errorf("unable to capture a screenshot: %w", err)
	}
	return res.Data, nil
}

func (e *Env) setViewport(ctx context.Context, s catalog.Size) error {
	if s == e.viewport {
		return nil
	}
	_, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: int64(s.W), Height: int64(s.H), DeviceScaleFactor: e.cfg.scale, Mobile: false,
	})
	if err != nil {
		return fmt.Errorf("unable to set the viewport to %s: %w", s, err)
	}
	e.viewport = s
	return nil
}

// TaskURL returns the start page of a task.
func (e *Env) TaskURL(t TaskRef) string {
	u := *e.base
	if strings.HasPrefix(t.Family, catalog.MiniWoBPrefix) {
		u.Path += webenv.MiniWoBPath(t.Family)
		return u.String()
	}
	if name, ok := strings.CutPrefix(t.Family, webenv.ThirdPartyPrefix); ok {
		u.Path += "/thirdparty/" + name + ".html"
		return u.String()
	}
	u.Path += "/t/" + t.Family + "/" + t.Site + "/"
	return u.String()
}

type observed struct {
	Status   pageStatus `json:"status"`
	Elements []Element  `json:"elements"`
	Text     []string   `json:"text"`
	URL      string     `json:"url"`
	FP       string     `json:"fp"`
}

// ObserveJS is the expression whose value is an observation of the page:
// status, elements (assigning bids), the page's text, URL, and the page's
// fingerprint after all that (the no-op click penalty's "after"). A settler
// may read it in its last round trip (Settled.Observed).
const ObserveJS = `(function(){var w = window.__wob; return {status: w.status(), elements: w.elements(), text: w.pageText(), url: location.href, fp: w.fingerprint()};})()`

// observe reads the page (ObserveJS, unless the settler read it:
// Settled.Observed) and takes the screenshot unless the settler's frame is
// there.
func (e *Env) observe(ctx context.Context, s Settled) (*Observation, pageStatus, error) {
	var o observed
	var err error
	if len(s.Observed) > 0 {
		if err = json.Unmarshal(s.Observed, &o); err != nil {
			err = fmt.Errorf("unable to decode the settler's observation: %w", err)
		}
	} else {
		err = e.eval(ctx, ObserveJS, &o)
	}
	if err != nil {
		return nil, pageStatus{}, fmt.Errorf("unable to observe the page: %w", err)
	}
	o.Status.FP = o.FP
	obs := &Observation{Viewport: e.viewport, URL: o.URL, Instruction: o.Status.Utterance, Elements: o.Elements, Text: o.Text,
		Stable: s.Stable, SettleWait: s.Waited, Score: s.Score}
	if e.cfg.screenshots && len(s.Frame) > 0 {
		obs.Screenshot = s.Frame // the frame the settler judged (Settled.Frame)
		obs.ScreenshotPixels = s.FramePixels
	} else if e.cfg.screenshots {
		if obs.Screenshot, err = e.screenshot(ctx); err != nil {
			return nil, pageStatus{}, err
		}
	}
	return obs, o.Status, nil
}

// Observe observes the current page without acting or settling.
func (e *Env) Observe(ctx context.Context) (*Observation, error) {
	c, cancel := e.bind(ctx)
	defer cancel()
	obs, _, err := e.observe(c, Settled{Stable: true})
	return obs, err
}

// Read evaluates a JavaScript expression in the page and decodes its value
// into out, without acting. Scripted solvers read with it what a person
// reads off the screen and the observation does not carry (where a drawing
// sits, a glyph's box).
func (e *Env) Read(ctx context.Context, js string, out any) error {
	c, cancel := e.bind(ctx)
	defer cancel()
	return e.eval(c, js, out)
}

// QueryBID returns the bid of the first visible element that matches a CSS
// selector, waiting up to wait for one to appear. It reads the page only (the
// oracle finds its targets with it, then acts through Step).
func (e *Env) QueryBID(ctx context.Context, css string, wait time.Duration) (string, error) {
	c, cancel := e.bind(ctx)
	defer cancel()
	q, _ := json.Marshal(css)
	deadline := time.Now().Add(wait)
	for {
		var bid string
		err := e.eval(c, `window.__wob.query(`+string(q)+`)`, &bid)
		if err == nil && bid != "" {
			return bid, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("no visible element")
			}
			return "", fmt.Errorf("unable to find %s: %w", css, err)
		}
		if err := backoff.Sleep(c, 50*time.Millisecond); err != nil {
			return "", err
		}
	}
}
