package env

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
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

// policyAction is the policy's form of a solver's action (the inverse of
// actor.envAction), or an error for what the policy has no type for.
func policyAction(a Action) (*eventspb.Action, error) {
	switch a.Type {
	case Click:
		return &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: a.BID}, nil
	case Fill:
		return &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_FILL, Bid: a.BID, Text: a.Text}, nil
	case SelectOption:
		if len(a.Options) != 1 {
			return nil, fmt.Errorf("select_option with %d options (the policy selects one)", len(a.Options))
		}
		return &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_SELECT_OPTION, Bid: a.BID, Text: a.Options[0]}, nil
	case Press:
		return &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_PRESS, Bid: a.BID, Key: a.Key}, nil
	case Noop:
		return &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_NOOP}, nil
	}
	return nil, fmt.Errorf("no policy action type for %s", a.Type)
}

// expressible says why the policy's heads cannot take a from the
// observation the policy would see, or "" when they can: the observation is
// featurized, the action mapped to head indices (ChoiceOf, as the learner
// maps a demonstration), the choice checked against the masks, and mapped
// back (ActionOf) to the same type, element, text and key.
func expressible(arch *policy.Architecture, obs *Observation, a Action) string {
	want, err := policyAction(a)
	if err != nil {
		return err.Error()
	}
	f, err := arch.Featurize(policyObservation(obs))
	if err != nil {
		return "featurize: " + err.Error()
	}
	c, err := arch.ChoiceOf(f, want)
	if err != nil {
		if el := findBID(obs, a.BID); errors.Is(err, policy.ErrNotRepresentable) && a.BID != "" && el != nil {
			return fmt.Sprintf("%v (element role %q text %q; candidates %q)", err, el.Role, el.Text, f.Candidates)
		}
		return fmt.Sprintf("%v (candidates %q)", err, f.Candidates)
	}
	E := arch.MaxElements
	typ := arch.TypeAt(c.Type)
	switch {
	case f.TypeMask[c.Type] != 1:
		return fmt.Sprintf("type %s is masked", typ)
	case policy.UsesElement(typ) && f.ElemTypeMask[c.Type*E+c.Element] != 1:
		return fmt.Sprintf("element %d (bid %s, role %q) is masked for %s", c.Element, a.BID, findBID(obs, a.BID).Role, typ)
	case policy.UsesText(typ) && f.CandMask[arch.TextRow(typ, c.Element)*arch.MaxCandidates+c.Candidate] != 1:
		return fmt.Sprintf("candidate %d is masked", c.Candidate)
	}
	got, err := arch.ActionOf(f, c)
	if err != nil {
		return "action of the choice: " + err.Error()
	}
	if got.GetType() != want.GetType() || got.GetBid() != want.GetBid() || got.GetText() != want.GetText() ||
		(want.GetType() == eventspb.ActionType_ACTION_TYPE_PRESS && got.GetKey() != want.GetKey()) {
		return fmt.Sprintf("the heads give back %s, not %s", got.GetRaw(), a)
	}
	return ""
}

func findBID(obs *Observation, bid string) *Element {
	for i := range obs.Elements {
		if obs.Elements[i].BID == bid {
			return &obs.Elements[i]
		}
	}
	return nil
}

// TestIntegrationMiniWoBHeads plays the scripted solutions of issue 16's
// acceptance tasks in real Chromium and checks that every step is an action
// the policy's heads can express from the observation the policy would see
// (a demonstration the learner would not skip, a solution the policy can
// sample). The per-task table is logged.
func TestIntegrationMiniWoBHeads(t *testing.T) {
	e, _ := miniwobEnv(t)
	arch := policy.DefaultArchitecture()
	seeds := []int64{1, 2, 3, 4, 5, 1_000_000_001, 1_000_000_002, 1_000_000_003}
	type tally struct {
		steps, bad, solved int
		why                map[string]int
	}
	table := map[string]*tally{}
	for _, name := range acceptanceTasks {
		tl := &tally{why: map[string]int{}}
		table[name] = tl
		t.Run(name, func(t *testing.T) {
			for _, seed := range seeds {
				obs := reset(t, e, TaskRef{Family: catalog.MiniWoBPrefix + name, Seed: seed})
				solverWatch = &watch{obs: obs, check: func(t *testing.T, obs *Observation, a Action) {
					tl.steps++
					if why := expressible(&arch, obs, a); why != "" {
						tl.bad++
						tl.why[string(a.Type)+": "+why]++
						t.Errorf("seed %d %q: %s: %s", seed, obs.Instruction, a, why)
					}
				}}
				r := miniwobSolvers[name](t, e, obs)
				solverWatch = nil
				// Whether the solution works is TestIntegrationMiniWoB's
				// matter (seeds 1-3); here it is only reported.
				if r.Done && r.Info.Success {
					tl.solved++
				} else {
					t.Logf("seed %d %q: the solver did not succeed: %+v", seed, obs.Instruction, r.Info)
				}
			}
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-17s %8s %6s %16s\n", "task", "solved", "steps", "not expressible")
	for _, name := range acceptanceTasks {
		tl := table[name]
		fmt.Fprintf(&b, "%-17s %5d/%-2d %6d %16d\n", name, tl.solved, len(seeds), tl.steps, tl.bad)
		var whys []string
		for w := range tl.why {
			whys = append(whys, w)
		}
		sort.Strings(whys)
		for _, w := range slices.Compact(whys) {
			fmt.Fprintf(&b, "    %dx %s\n", tl.why[w], w)
		}
	}
	t.Log("\n" + b.String())
}
