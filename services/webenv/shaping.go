package webenv

import (
	"fmt"
	"strconv"
	"strings"
)

// Shaping holds the weights of AsyncWebRL's switchable shaping terms, added
// to the sparse success reward (1 when an episode ends with every fact met).
// A zero weight switches its term off; the zero value is no shaping.
type Shaping struct {
	// Progress multiplies the change of partial credit since the last step.
	Progress float64
	// SubGoal is paid once for each fact group that becomes fully met.
	SubGoal float64
	// NoOpClick is the penalty for a click that changed nothing (no DOM
	// mutation, value, focus, scroll, URL or server state change).
	NoOpClick float64
	// Repeat is the penalty for repeating the previous action exactly.
	Repeat float64
}

// DefaultShaping is the preset that "on" selects.
var DefaultShaping = Shaping{Progress: 0.5, SubGoal: 0.1, NoOpClick: 0.05, Repeat: 0.05}

// ParseShaping parses "off", "on" (DefaultShaping) or a comma-separated list
// of term=weight, e.g. "progress=0.5,subgoal=0.1,noop=0.05,repeat=0.05"; a
// term named without a weight takes its default weight.
func ParseShaping(spec string) (Shaping, error) {
	spec = strings.TrimSpace(strings.ToLower(spec))
	switch spec {
	case "", "off", "none":
		return Shaping{}, nil
	case "on", "default":
		return DefaultShaping, nil
	}
	var s Shaping
	for _, part := range strings.Split(spec, ",") {
		name, val, hasVal := strings.Cut(strings.TrimSpace(part), "=")
		var field *float64
		var def float64
		switch name {
		case "progress":
			field, def = &s.Progress, DefaultShaping.Progress
		case "subgoal", "subgoals":
			field, def = &s.SubGoal, DefaultShaping.SubGoal
		case "noop", "noopclick":
			field, def = &s.NoOpClick, DefaultShaping.NoOpClick
		case "repeat", "repeats":
			field, def = &s.Repeat, DefaultShaping.Repeat
		default:
			return Shaping{}, fmt.Errorf("unknown shaping term %q: want progress, subgoal, noop or repeat", name)
		}
		if !hasVal {
			*field = def
			continue
		}
		w, err := strconv.ParseFloat(val, 64)
		if err != nil || w < 0 {
			return Shaping{}, fmt.Errorf("bad weight %q for shaping term %s: want a non-negative number", val, name)
		}
		*field = w
	}
	return s, nil
}

// ShapingTerms is the breakdown of one step's shaping reward.
type ShapingTerms struct {
	Progress  float64 `json:"progress,omitempty"`
	SubGoal   float64 `json:"subgoal,omitempty"`
	NoOpClick float64 `json:"noop_click,omitempty"`
	Repeat    float64 `json:"repeat,omitempty"`
}

// Total is the sum of the terms.
func (t ShapingTerms) Total() float64 { return t.Progress + t.SubGoal + t.NoOpClick + t.Repeat }

// StepFacts is what the shaping terms look at for one step.
type StepFacts struct {
	PrevPartial, Partial float64
	PrevGroups, Groups   []string
	// Click is set when the action was a click; Changed reports whether it
	// changed anything.
	Click, Changed bool
	// Repeated is set when the action equals the previous one.
	Repeated bool
}

// Terms computes the shaping terms of one step.
func (s Shaping) Terms(f StepFacts) ShapingTerms {
	var t ShapingTerms
	t.Progress = s.Progress * (f.Partial - f.PrevPartial)
	if s.SubGoal != 0 {
		prev := map[string]bool{}
		for _, g := range f.PrevGroups {
			prev[g] = true
		}
		for _, g := range f.Groups {
			if !prev[g] {
				t.SubGoal += s.SubGoal
			}
		}
	}
	if f.Click && !f.Changed {
		t.NoOpClick = -s.NoOpClick
	}
	if f.Repeated {
		t.Repeat = -s.Repeat
	}
	return t
}
