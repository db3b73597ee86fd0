package action

import (
	"strconv"
	"strings"
)

// DefaultNoopWait is noop()'s wait, as in BrowserGym.
const DefaultNoopWait = 1000

// Action is one agent action. Only the fields of its type are set.
type Action struct {
	Type Name `json:"type"`
	// BID is the element of click, dblclick, hover, fill, select_option,
	// (optionally) press, and where drag_and_drop starts.
	BID string `json:"bid,omitempty"`
	// ToBID is where drag_and_drop ends.
	ToBID string `json:"to_bid,omitempty"`
	// X, Y are mouse_click's point and where mouse_drag_and_drop starts;
	// ToX, ToY where it ends (CSS pixels in the env's form, wire-frame
	// pixels in events).
	X   float64 `json:"x,omitempty"`
	Y   float64 `json:"y,omitempty"`
	ToX float64 `json:"to_x,omitempty"`
	ToY float64 `json:"to_y,omitempty"`
	// Text is fill's value and send_msg_to_user's message.
	Text string `json:"text,omitempty"`
	// Options are select_option's options (by value or visible text).
	Options []string `json:"options,omitempty"`
	// Key is press's key combination, e.g. "Enter", "a", "Control+a".
	Key string `json:"key,omitempty"`
	// DX and DY are scroll's deltas in CSS pixels.
	DX float64 `json:"dx,omitempty"`
	DY float64 `json:"dy,omitempty"`
	// URL is goto's address, absolute or relative to the current page.
	URL string `json:"url,omitempty"`
	// WaitMS is noop's wait in milliseconds.
	WaitMS int `json:"wait_ms,omitempty"`
}

// String formats the action in BrowserGym's string form; Parse reads it
// back to the same action.
func (a Action) String() string {
	q := strconv.Quote
	switch a.Type {
	case Click:
		return "click(" + q(a.BID) + ")"
	case Fill:
		return "fill(" + q(a.BID) + ", " + q(a.Text) + ")"
	case SelectOption:
		if len(a.Options) == 1 {
			return "select_option(" + q(a.BID) + ", " + q(a.Options[0]) + ")"
		}
		opts := make([]string, len(a.Options))
		for i, o := range a.Options {
			opts[i] = q(o)
		}
		return "select_option(" + q(a.BID) + ", [" + strings.Join(opts, ", ") + "])"
	case Scroll:
		switch {
		case a.BID != "":
			return "scroll(" + fmtNum(a.DX) + ", " + fmtNum(a.DY) + ", " + q(a.BID) + ")"
		case a.X != 0 || a.Y != 0:
			return "scroll(" + fmtNum(a.DX) + ", " + fmtNum(a.DY) + ", x=" + fmtNum(a.X) + ", y=" + fmtNum(a.Y) + ")"
		}
		return "scroll(" + fmtNum(a.DX) + ", " + fmtNum(a.DY) + ")"
	case Press:
		if a.BID != "" {
			return "press(" + q(a.BID) + ", " + q(a.Key) + ")"
		}
		return "press(" + q(a.Key) + ")"
	case Goto:
		return "goto(" + q(a.URL) + ")"
	case GoBack:
		return "go_back()"
	case Noop:
		return "noop(" + strconv.Itoa(a.WaitMS) + ")"
	case SendMsg:
		return "send_msg_to_user(" + q(a.Text) + ")"
	case MouseClick:
		return "mouse_click(" + fmtNum(a.X) + ", " + fmtNum(a.Y) + ")"
	case MouseMove:
		return "mouse_move(" + fmtNum(a.X) + ", " + fmtNum(a.Y) + ")"
	case KeyboardType:
		return "keyboard_type(" + q(a.Text) + ")"
	case DblClick:
		return "dblclick(" + q(a.BID) + ")"
	case Hover:
		return "hover(" + q(a.BID) + ")"
	case DragAndDrop:
		return "drag_and_drop(" + q(a.BID) + ", " + q(a.ToBID) + ")"
	case MouseDragAndDrop:
		return "mouse_drag_and_drop(" + fmtNum(a.X) + ", " + fmtNum(a.Y) + ", " + fmtNum(a.ToX) + ", " + fmtNum(a.ToY) + ")"
	}
	return "unknown(" + q(string(a.Type)) + ")"
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// IsClick reports whether the action is a click (for the no-op penalty).
func (a Action) IsClick() bool { return a.Type == Click }
