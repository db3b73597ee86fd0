package env

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// pageStatus is agent.js's status(): the MiniWoB globals and the rubric.
type pageStatus struct {
	HasCore   bool          `json:"hasCore"`
	Done      bool          `json:"done"`
	Reward    float64       `json:"reward"`
	Raw       float64       `json:"raw"`
	Reason    string        `json:"reason"`
	EpisodeID int           `json:"episodeId"`
	Ready     bool          `json:"ready"`
	Info      *webenv.Score `json:"info"`
	Utterance string        `json:"utterance"`
	Viewport  string        `json:"viewport"`
	// FP is the page's fingerprint (agent.js), set by observe only.
	FP string `json:"-"`
}

func (e *Env) status(ctx context.Context) (pageStatus, error) {
	var st pageStatus
	err := e.eval(ctx, `window.__wob.status()`, &st)
	return st, err
}

// Reset opens the task's page and starts a seeded episode.
func (e *Env) Reset(ctx context.Context, task TaskRef) (*Observation, error) {
	c, cancel := e.bind(ctx)
	defer cancel()
	e.active, e.done, e.lastScore, e.lastAction, e.lastGroups, e.messages = false, false, nil, "", nil, nil
	e.lastPotential = 0
	e.task = task
	if task.Seed < 0 {
		return nil, fmt.Errorf("unable to reset %s/%s: unknown seed %d", task.Family, task.Site, task.Seed)
	}
	target := e.TaskURL(task)
	// Like the MiniWoB harnesses, start the next episode on the page that is
	// open when it is the task's page: no reload, one seeded restart.
	var here struct {
		URL     string `json:"url"`
		HasCore bool   `json:"hasCore"`
	}
	_ = e.eval(c, `({url: location.href, hasCore: typeof window.core === 'object' && window.core !== null && typeof core.startEpisodeReal === 'function'})`, &here)
	if here.URL != target || !here.HasCore {
		if err := e.open(c, target); err != nil {
			return nil, err
		}
	}
	// The episode starts a history of its own: go_back never leaves it for
	// the previous episode's pages.
	if _, err := chromedp.Call(c, page.ResetNavigationHistory, cdp.Empty{}); err != nil {
		return nil, fmt.Errorf("unable to reset the history: %w", err)
	}
	st, err := e.status(c)
	if err != nil {
		return nil, fmt.Errorf("unable to read %s: %w", target, err)
	}
	if !st.HasCore {
		return nil, fmt.Errorf("unable to start %s: the page has no MiniWoB core", target)
	}
	vp := e.cfg.viewport
	if vp.W == 0 {
		vp = e.cfg.defViewport
		if w, h, ok := parseSize(st.Viewport); ok {
			vp = catalog.Size{W: w, H: h}
		}
	}
	if err := e.setViewport(c, vp); err != nil {
		return nil, err
	}
	// The pointer leaves the page: an episode's first observation does not
	// depend on where the last one's last action left it (a hover that
	// swaps an image shrinks the element it rests on).
	if err := e.mouse(c, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: -1, Y: -1}); err != nil {
		return nil, err
	}
	if _, err := e.netWait(c); err != nil {
		return nil, fmt.Errorf("unable to start %s: %w", target, err)
	}
	// The reference harnesses' start: end whatever runs, seed, start.
	// Before it, the focus leaves the last episode's element, as the
	// pointer does above: on a page the episode restarts without a reload,
	// the element the last episode ended on (click-option's Submit) stayed
	// focused into the next one's first observation, where a fresh page's
	// has none: the first observation told of the last episode. A task
	// that focuses an element itself does so in the start, after this.
	start := fmt.Sprintf(`if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur(); core.endEpisode(0); Math.seedrandom(%d); core.startEpisodeReal(); true`, task.Seed)
	if d := e.cfg.miniwobTimeLimit; d > 0 && catalog.IsMiniWoB(task.Family) {
		// Before the start, which arms the timer with it.
		start = fmt.Sprintf(`core.EPISODE_MAX_TIME = %d; `, d.Milliseconds()) + start
	}
	if err := e.eval(c, start, nil); err != nil {
		return nil, fmt.Errorf("unable to start an episode of %s: %w", target, err)
	}
	deadline := time.Now().Add(e.cfg.readyTimeout)
	for {
		if st, err = e.status(c); err == nil && st.Ready {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("unable to start %s: the task was not ready after %s", target, e.cfg.readyTimeout)
		}
		if err := backoff.Sleep(c, 20*time.Millisecond); err != nil {
			return nil, fmt.Errorf("unable to start %s: %w", target, err)
		}
	}
	if st.Done && strings.HasPrefix(st.Reason, "error") {
		return nil, fmt.Errorf("unable to start %s seed %d: %s", target, task.Seed, st.Reason)
	}
	settled, err := e.cfg.settler.Settle(c, tabPage{e})
	if err != nil {
		return nil, fmt.Errorf("unable to settle %s: %w", target, err)
	}
	obs, st, err := e.observe(c, settled)
	if err != nil {
		return nil, err
	}
	e.active = true
	e.done = st.Done
	if st.Info != nil {
		e.lastScore = st.Info
		e.lastGroups = webenv.GroupsMet(st.Info.Facts)
	} else {
		e.lastPotential = instructionPotential(obs)
	}
	return obs, nil
}

// open loads a task's start page; an HTTP error is an error with the
// server's reason.
func (e *Env) open(ctx context.Context, target string) error {
	nc, cancel := context.WithTimeout(ctx, e.cfg.actionTimeout)
	defer cancel()
	resp, err := chromedp.Run(nc, chromedp.NavigateResponse(target))
	if err != nil {
		return fmt.Errorf("unable to open %s: %w", target, err)
	}
	if resp != nil && resp.Status >= 400 {
		var body string
		_ = e.eval(ctx, `document.body ? document.body.innerText : ''`, &body)
		// webenv answers errors as {"error": "..."}: give the reason alone.
		var je struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(body), &je) == nil && je.Error != "" {
			body = je.Error
		}
		return fmt.Errorf("unable to open %s: HTTP %d: %s", target, resp.Status, clip(strings.TrimSpace(body), 300))
	}
	return nil
}

func parseSize(s string) (int, int, bool) {
	w, h, ok := strings.Cut(s, "x")
	if !ok {
		return 0, 0, false
	}
	wi, err1 := strconv.Atoi(w)
	hi, err2 := strconv.Atoi(h)
	if err1 != nil || err2 != nil || wi < 50 || hi < 50 || wi > 4000 || hi > 4000 {
		return 0, 0, false
	}
	return wi, hi, true
}
