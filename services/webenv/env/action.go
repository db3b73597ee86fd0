package env

import (
	"fmt"

	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
)

// Action is one agent action, in the action table's env form
// (services/internal/action): only the fields of its type are set.
type Action = action.Action

// ActionType names an action of BrowserGym's vocabulary (a row of the
// action table).
type ActionType = action.Name

// The actions (the action table's names).
const (
	Click        = action.Click
	Fill         = action.Fill
	SelectOption = action.SelectOption
	Scroll       = action.Scroll
	Press        = action.Press
	Goto         = action.Goto
	GoBack       = action.GoBack
	Noop         = action.Noop
	SendMsg      = action.SendMsg

	MouseClick       = action.MouseClick
	DblClick         = action.DblClick
	Hover            = action.Hover
	DragAndDrop      = action.DragAndDrop
	MouseDragAndDrop = action.MouseDragAndDrop
	MouseMove        = action.MouseMove
	KeyboardType     = action.KeyboardType
)

// DefaultNoopWait is noop()'s wait, as in BrowserGym.
const DefaultNoopWait = action.DefaultNoopWait

// maxNoopWait bounds a noop's wait (ms).
const maxNoopWait = action.MaxNoopWait

// ParseAction parses one action in BrowserGym's string form (action.Parse)
// and checks that a press names keys this browser can send.
func ParseAction(s string) (Action, error) {
	a, err := action.Parse(s)
	if err != nil {
		return Action{}, err
	}
	if a.Type == Press {
		if _, err := parseKeyCombo(a.Key); err != nil {
			return Action{}, fmt.Errorf("unable to parse action %q: press: %w", clip(s, 80), err)
		}
	}
	return a, nil
}

// clip shortens text for error messages (action.Clip).
var clip = action.Clip
