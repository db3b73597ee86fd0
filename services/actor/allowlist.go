package actor

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// allowlist is the set of origins a tab may load anything from. It is
// enforced at the network layer: the DevTools Fetch domain pauses every
// request of the tab, and the ones to other origins are failed with
// BlockedByClient before they leave the browser (navigations, sub-resources,
// fetch/XHR, redirects alike), so a policy cannot reach the open web
// whatever it clicks or types.
type allowlist struct {
	origins map[string]bool
}

// newAllowlist parses origins (or URLs, whose origin is taken).
func newAllowlist(origins []string) (*allowlist, error) {
	a := &allowlist{origins: map[string]bool{}}
	for _, o := range origins {
		n, err := originOf(o)
		if err != nil {
			return nil, fmt.Errorf("unable to allow origin %q: %w", o, err)
		}
		a.origins[n] = true
	}
	if len(a.origins) == 0 {
		return nil, fmt.Errorf("unable to build the origin allowlist: no origin")
	}
	return a, nil
}

// originOf returns the normalised origin of a URL: lower-case scheme and
// host, the port only when it is not the scheme's default.
func originOf(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("want an http(s) origin like http://127.0.0.1:18080")
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		return scheme + "://" + host + ":" + port, nil
	}
	return scheme + "://" + host, nil
}

// allows reports whether a request to raw may go out. Only http(s) requests
// reach the Fetch domain; anything unparsable is refused.
func (a *allowlist) allows(raw string) bool {
	o, err := originOf(raw)
	return err == nil && a.origins[o]
}

// install enables request interception on the tab of tabCtx. onBlocked is
// called for every refused request (from a goroutine of its own).
func (a *allowlist) install(tabCtx context.Context, onBlocked func(url string)) error {
	err := chromedp.Listen(tabCtx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok || e.Request == nil {
			return
		}
		// The listener runs in the tab's read loop: answer elsewhere.
		go a.answer(tabCtx, e.RequestID, e.Request.URL, onBlocked)
	})
	if err != nil {
		return fmt.Errorf("unable to listen for requests: %w", err)
	}
	_, err = chromedp.Call(tabCtx, fetch.Enable, fetch.EnableParams{
		Patterns: []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageRequest}},
	})
	if err != nil {
		return fmt.Errorf("unable to enable request interception: %w", err)
	}
	return nil
}

func (a *allowlist) answer(tabCtx context.Context, id fetch.RequestID, u string, onBlocked func(string)) {
	var err error
	if a.allows(u) {
		_, err = chromedp.Call(tabCtx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id})
	} else {
		onBlocked(u)
		_, err = chromedp.Call(tabCtx, fetch.FailRequest, fetch.FailRequestParams{RequestID: id, ErrorReason: network.ErrorReasonBlockedByClient})
	}
	// An error here means the tab or its request is gone (navigation away,
	// tab closed, browser crash): nothing is left to answer.
	_ = err
}
