package env

import (
	"unicode/utf8"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// policyObservation is the obs event the actor builds from o
// (actor.observer.observation), without what the heads do not depend on
// (envelope, timings, the frame's downscaling: the frame is the PNG at
// viewport size, so boxes stay in its pixels). Texts and values are cut to
// the actor's 200 bytes.
func policyObservation(o *Observation) *eventspb.Observation {
	ev := &eventspb.Observation{Url: o.URL, Instruction: o.Instruction, Stable: o.Stable,
		Width: uint32(o.Viewport.W), Height: uint32(o.Viewport.H)}
	if len(o.Screenshot) > 0 {
		ev.Frame, ev.FrameFormat = o.Screenshot, "png"
	}
	for _, el := range o.Elements {
		ev.Elements = append(ev.Elements, &eventspb.Element{
			Bid: el.BID, Role: el.Role, Text: clipBytes(el.Text, 200),
			Box:     &eventspb.Box{X: float32(el.Box.X), Y: float32(el.Box.Y), W: float32(el.Box.W), H: float32(el.Box.H)},
			Checked: el.Checked, Value: clipBytes(el.Value, 200), Focused: el.Focused, Disabled: el.Disabled,
			Options: clipAll(el.Options, 200), Hint: clipBytes(el.Hint, 200), Context: clipBytes(el.Context, 200),
			DomId: clipBytes(el.DOMID, 200),
		})
	}
	return ev
}

func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func clipAll(ss []string, n int) []string {
	var out []string
	for _, s := range ss {
		out = append(out, clipBytes(s, n))
	}
	return out
}

func findBID(obs *Observation, bid string) *Element {
	for i := range obs.Elements {
		if obs.Elements[i].BID == bid {
			return &obs.Elements[i]
		}
	}
	return nil
}
