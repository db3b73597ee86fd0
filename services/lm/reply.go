package lm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
)

// InvalidError is a reply that names no action this page can take: no
// action in the grammar, one outside the run's action set, or a bid the
// page does not have. The actor records it as an invalid action (a wait,
// flagged), never runs it.
type InvalidError struct {
	// Reason says what was wrong, for the dead letter and the event.
	Reason string
}

func (e *InvalidError) Error() string { return "invalid model reply: " + e.Reason }

// maxReplyScan bounds the reply text ParseReply reads, in bytes.
const maxReplyScan = 4 << 10

// ParseReply takes the first valid action out of a model's reply: the
// first line that holds one action of the grammar (a line may wrap it in
// backticks or lead with "Action:"), of action set s, whose bids are on
// obs's page and whose points are in its frame. A comment line (# …: an
// AnswerTarget reply's element) names no action, whatever text it quotes.
// It returns an *InvalidError when there is none.
func ParseReply(reply string, obs *eventspb.Observation, s action.Set) (action.Action, error) {
	if len(reply) > maxReplyScan {
		reply = reply[:maxReplyScan]
	}
	allowed := s.Types()
	var firstErr error
	budget := maxParses
	for line := range strings.Lines(reply) {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		a, ok := actionIn(line, &budget)
		if !ok {
			continue
		}
		err := check(a, obs, allowed)
		if err == nil {
			return a, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return action.Action{}, firstErr
	}
	if strings.TrimSpace(reply) == "" {
		return action.Action{}, &InvalidError{Reason: "empty reply"}
	}
	return action.Action{}, &InvalidError{Reason: fmt.Sprintf("no action in %q", action.Clip(strings.TrimSpace(reply), 80))}
}

// maxParses bounds the parse attempts on one reply, so that no reply
// (thousands of "click(" and ")") makes a decision slow.
const maxParses = 64

// actionIn finds one action of the grammar in line: from an action name
// followed by "(" to the first ")" up to which the text parses. Each try
// spends one of *budget.
func actionIn(line string, budget *int) (action.Action, bool) {
	for start := 0; start < len(line); start++ {
		if start > 0 && isIdent(line[start-1]) || !isIdent(line[start]) {
			continue
		}
		open := strings.IndexByte(line[start:], '(')
		if open <= 0 {
			return action.Action{}, false
		}
		if _, ok := action.ByName(action.Name(line[start : start+open])); !ok {
			continue
		}
		for end := start + open; end < len(line); end++ {
			if line[end] != ')' {
				continue
			}
			if *budget <= 0 {
				return action.Action{}, false
			}
			*budget--
			if a, err := action.Parse(line[start : end+1]); err == nil {
				return a, true
			}
		}
	}
	return action.Action{}, false
}

func isIdent(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// check holds a parsed action to the action set and the page.
func check(a action.Action, obs *eventspb.Observation, allowed []eventspb.ActionType) error {
	r, _ := action.ByName(a.Type)
	if !slices.Contains(allowed, r.Type) {
		return &InvalidError{Reason: fmt.Sprintf("%s is not in the run's action set", a.Type)}
	}
	for _, bid := range []string{a.BID, a.ToBID} {
		if bid != "" && !hasBID(obs, bid) {
			return &InvalidError{Reason: fmt.Sprintf("%s names bid %q, which the page does not have", a.Type, action.Clip(bid, 20))}
		}
	}
	if r.Target == action.TargetPoint {
		w, h := float64(obs.GetWidth()), float64(obs.GetHeight())
		for _, p := range [][2]float64{{a.X, a.Y}, {a.ToX, a.ToY}} {
			if p[0] < 0 || p[1] < 0 || w > 0 && p[0] > w || h > 0 && p[1] > h {
				return &InvalidError{Reason: fmt.Sprintf("%s at (%g, %g) is outside the %gx%g frame", a.Type, p[0], p[1], w, h)}
			}
		}
	}
	return nil
}

func hasBID(obs *eventspb.Observation, bid string) bool {
	return slices.ContainsFunc(obs.GetElements(), func(e *eventspb.Element) bool { return e.GetBid() == bid })
}
