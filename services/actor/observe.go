package actor

import (
	"time"
	"unicode/utf8"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/casstore"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// maxText bounds element texts and values in events: the policy reads a few
// words of each, and a page must not blow up an event.
const maxText = 200

// observer turns the env's observations into obs events.
type observer struct {
	enc frameEncoder
	// store is the content-addressed store of full-resolution
	// screenshots: events carry the hash only (claim check). Nil: full
	// frames are not kept.
	store  *casstore.Store
	source string // producer id
}

// ObservationEvent is the obs event an actor with the default frame options
// publishes for o (no envelope ids, no task): what the policy featurizes.
// The expressiveness audit uses it to see pages as the policy does.
func ObservationEvent(o *env.Observation) (*eventspb.Observation, error) {
	d := defaultOptions()
	ob := &observer{enc: frameEncoder{maxSide: d.frameMaxSide, format: d.frameFormat, quality: d.jpegQuality}}
	return ob.observation("audit", "", 0, nil, o, false)
}

// observation builds the obs event of s_step from o. Boxes are converted
// from CSS pixels to wire-frame pixels (the schema's unit).
func (ob *observer) observation(producer, episode string, step uint32, ref *eventspb.TaskRef, o *env.Observation, terminal bool) (*eventspb.Observation, error) {
	start := time.Now()
	env := eventspb.NewEnvelope(producer)
	env.EpisodeId, env.Step, env.Source = episode, step, eventspb.Source_SOURCE_POLICY
	ev := &eventspb.Observation{
		Envelope:       env,
		Task:           ref,
		Url:            o.URL,
		Instruction:    o.Instruction,
		Stable:         o.Stable,
		StabilityScore: clamp01(o.Score),
		Terminal:       terminal,
	}
	sx, sy := 1.0, 1.0
	if len(o.Screenshot) > 0 {
		f, err := ob.enc.encode(o.Screenshot, o.ScreenshotPixels, o.Viewport.W, o.Viewport.H)
		if err != nil {
			return nil, err
		}
		ev.Frame, ev.FrameFormat, ev.Width, ev.Height = f.data, ob.enc.format, uint32(f.width), uint32(f.height)
		sx, sy = f.scaleX, f.scaleY
		if ob.store != nil {
			h, err := ob.store.Put(o.Screenshot)
			if err != nil {
				return nil, err
			}
			ev.FullFrameHash = h
		}
	} else if o.Viewport.W > 0 {
		ev.Width, ev.Height = uint32(o.Viewport.W), uint32(o.Viewport.H)
	}
	ev.Elements = make([]*eventspb.Element, 0, len(o.Elements))
	for _, el := range o.Elements {
		ev.Elements = append(ev.Elements, &eventspb.Element{
			Bid:  el.BID,
			Role: el.Role,
			Text: clip(el.Text, maxText),
			Box: &eventspb.Box{
				X: float32(float64(el.Box.X) * sx), Y: float32(float64(el.Box.Y) * sy),
				W: float32(float64(el.Box.W) * sx), H: float32(float64(el.Box.H) * sy),
			},
			Checked:  el.Checked,
			Value:    clip(el.Value, maxText),
			Focused:  el.Focused,
			Disabled: el.Disabled,
			Options:  clipAll(el.Options, maxText, maxOptions),
			Selected: clipAll(el.Selected, maxText, maxOptions),
			Hint:     clip(el.Hint, maxText),
			Context:  clip(el.Context, maxText),
			DomId:    clip(el.DOMID, maxText),
		})
	}
	ev.PageText = clipAll(o.Text, maxLineBytes, maxPageLines)
	ev.Timings = &eventspb.ObservationTimings{
		ObserveMs: uint32(time.Since(start).Milliseconds()),
		SettleMs:  uint32(o.SettleWait.Milliseconds()),
	}
	return ev, nil
}

func clamp01(v float64) float64 {
	switch {
	case v != v || v < 0: // NaN too
		return 0
	case v > 1:
		return 1
	}
	return v
}

// maxOptions bounds a select's options in events (the policy offers them
// as text candidates, of which it keeps a few dozen).
const maxOptions = 64

// clipAll clips each of the first m strings of ss to n bytes.
func clipAll(ss []string, n, m int) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, 0, min(len(ss), m))
	for _, s := range ss[:min(len(ss), m)] {
		out = append(out, clip(s, n))
	}
	return out
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// EnvAction is the env action an actor executes for a policy's action
// event: its points and scroll amounts back in CSS pixels (scaleY is
// wire-frame pixels per CSS pixel; DemoEvent is the inverse). The
// expressiveness audit steps the heads' version of a step with it.
func EnvAction(a *eventspb.Action, scaleY float64) (env.Action, error) {
	return envAction(a, scaleY, 0)
}

// envAction converts a policy action to the env's (the action table's
// FromProto). Scroll amounts and points come in wire-frame pixels; scaleY
// is wire-frame pixels per CSS pixel. A noop waits noopWait.
func envAction(a *eventspb.Action, scaleY float64, noopWait time.Duration) (env.Action, error) {
	act, err := action.FromProto(a)
	if err != nil {
		return env.Action{}, err
	}
	if scaleY <= 0 {
		scaleY = 1
	}
	// The wire frame keeps the page's aspect (frame.Fit): one scale serves
	// both axes.
	switch r, _ := action.ByName(act.Type); {
	case act.Type == env.Noop:
		act.WaitMS = int(noopWait.Milliseconds())
	case act.Type == env.Scroll:
		act.DX, act.DY = act.DX/scaleY, act.DY/scaleY
		act.X, act.Y = act.X/scaleY, act.Y/scaleY
	case r.Target == action.TargetPoint:
		act.X, act.Y, act.ToX, act.ToY = act.X/scaleY, act.Y/scaleY, act.ToX/scaleY, act.ToY/scaleY
	}
	return act, nil
}
