package action

import (
	"fmt"
	"slices"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// Name is an action type's BrowserGym name.
type Name string

// The action types, by BrowserGym name.
const (
	Noop         Name = "noop"
	Click        Name = "click"
	Fill         Name = "fill"
	SelectOption Name = "select_option"
	Scroll       Name = "scroll"
	Press        Name = "press"
	Goto         Name = "goto"
	GoBack       Name = "go_back"
	SendMsg      Name = "send_msg_to_user"
	// The mouse's own actions (issue 37): a point of the viewport, a
	// double click, a hover and drags, in BrowserGym's names.
	MouseClick       Name = "mouse_click"
	DblClick         Name = "dblclick"
	Hover            Name = "hover"
	DragAndDrop      Name = "drag_and_drop"
	MouseDragAndDrop Name = "mouse_drag_and_drop"
	MouseMove        Name = "mouse_move"
	// KeyboardType types text as key presses into the focused element,
	// for pages that listen for keys rather than read a value.
	KeyboardType Name = "keyboard_type"
)

// Target is what an action type acts on.
type Target int

const (
	// TargetNone: the page as a whole (noop, go_back, goto, the answer).
	TargetNone Target = iota
	// TargetElement: one element, by its bid.
	TargetElement
	// TargetElementOptional: an element when a bid is given, else the
	// focused one (press).
	TargetElementOptional
	// TargetViewport: the wheel at element bid's centre when a bid is
	// given, else at the point (x, y) when one is, else at the viewport's
	// centre (scroll: what is under the wheel scrolls, a list or the page).
	TargetViewport
	// TargetPoint: a point of the viewport (x, y), whatever is there.
	TargetPoint
)

func (t Target) String() string {
	return [...]string{"none", "element", "element-optional", "viewport", "point"}[t]
}

// Row is one action type.
type Row struct {
	Type eventspb.ActionType
	Name Name
	// Params are its BrowserGym parameters in positional order; the first
	// Required of them must be given.
	Params   []string
	Required int
	Target   Target
	// Roles are the element roles (Element.role) it may target; empty: any.
	Roles []string
	// Element and Text: the policy's element head chooses its bid, the
	// text head its text (a press: its key, from the key row), and both
	// log-probs count.
	Element, Text bool
	// Point and ToPoint: the policy's point head chooses its point (x, y),
	// and its destination row the second point (to_x, to_y) of a drag.
	Point, ToPoint bool
	// Set is the smallest action set that has the row ("": none).
	Set Set
	// Doc is what it does, for help texts and the docs.
	Doc string
}

// Table is every action type of the schema, in the enum's order.
var Table = []Row{
	{Type: eventspb.ActionType_ACTION_TYPE_NOOP, Set: SetBid, Name: Noop, Params: []string{"wait_ms"},
		Doc: "do nothing for wait_ms (default 1000) and look again"},
	{Type: eventspb.ActionType_ACTION_TYPE_CLICK, Set: SetBid, Name: Click, Params: []string{"bid", "button"}, Required: 1,
		Target: TargetElement, Element: true, Doc: "left-click element bid at its centre"},
	{Type: eventspb.ActionType_ACTION_TYPE_FILL, Set: SetBid, Name: Fill, Params: []string{"bid", "value"}, Required: 2,
		Target: TargetElement, Roles: []string{"textbox", "searchbox", "combobox", "spinbutton", "textarea"},
		Element: true, Text: true, Doc: "replace the value of text field bid with value"},
	{Type: eventspb.ActionType_ACTION_TYPE_SELECT_OPTION, Set: SetBid, Name: SelectOption, Params: []string{"bid", "options"}, Required: 2,
		Target: TargetElement, Roles: []string{"combobox", "listbox"}, Element: true, Text: true,
		Doc: "choose the option(s) of select bid, by value or visible text"},
	{Type: eventspb.ActionType_ACTION_TYPE_SCROLL, Set: SetBid, Name: Scroll, Params: []string{"delta_x", "delta_y", "bid", "x", "y"}, Required: 2,
		Target: TargetViewport, Element: true,
		Doc: "turn the wheel by (delta_x, delta_y) CSS pixels at element bid's centre, at the point (x, y), or at the viewport's centre"},
	{Type: eventspb.ActionType_ACTION_TYPE_PRESS, Set: SetBid, Name: Press, Params: []string{"bid", "key_comb"}, Required: 1,
		Target: TargetElementOptional, Element: true, Text: true,
		Doc: "press the key combination key_comb, focused on bid when given"},
	{Type: eventspb.ActionType_ACTION_TYPE_GOTO, Name: Goto, Params: []string{"url"}, Required: 1,
		Doc: "navigate to url (allowed origins only)"},
	{Type: eventspb.ActionType_ACTION_TYPE_GO_BACK, Set: SetBid, Name: GoBack, Doc: "browser history back"},
	{Type: eventspb.ActionType_ACTION_TYPE_SEND_MSG_TO_USER, Set: SetBid, Name: SendMsg, Params: []string{"text"}, Required: 1,
		Text: true, Doc: "answer the user with text"},
	{Type: eventspb.ActionType_ACTION_TYPE_MOUSE_CLICK, Set: SetBidCoord, Name: MouseClick, Params: []string{"x", "y", "button"}, Required: 2,
		Target: TargetPoint, Point: true, Doc: "left-click the viewport point (x, y), whatever is there"},
	{Type: eventspb.ActionType_ACTION_TYPE_DBLCLICK, Set: SetBidCoord, Name: DblClick, Params: []string{"bid", "button"}, Required: 1,
		Target: TargetElement, Element: true, Doc: "double-click element bid at its centre"},
	{Type: eventspb.ActionType_ACTION_TYPE_HOVER, Set: SetBidCoord, Name: Hover, Params: []string{"bid"}, Required: 1,
		Target: TargetElement, Element: true, Doc: "move the mouse onto element bid without clicking"},
	{Type: eventspb.ActionType_ACTION_TYPE_DRAG_AND_DROP, Name: DragAndDrop, Params: []string{"from_bid", "to_bid"}, Required: 2,
		Target: TargetElement, Doc: "press on element from_bid, move onto element to_bid, release"},
	{Type: eventspb.ActionType_ACTION_TYPE_MOUSE_DRAG_AND_DROP, Set: SetBidCoord, Name: MouseDragAndDrop, Params: []string{"from_x", "from_y", "to_x", "to_y"}, Required: 4,
		Target: TargetPoint, Point: true, ToPoint: true, Doc: "press at (from_x, from_y), move to (to_x, to_y), release"},
	{Type: eventspb.ActionType_ACTION_TYPE_MOUSE_MOVE, Set: SetBidCoord, Name: MouseMove, Params: []string{"x", "y"}, Required: 2,
		Target: TargetPoint, Point: true, Doc: "move the mouse to the viewport point (x, y) without clicking"},
	{Type: eventspb.ActionType_ACTION_TYPE_KEYBOARD_TYPE, Set: SetBidCoord, Name: KeyboardType, Params: []string{"text"}, Required: 1,
		Text: true, Doc: "type text as key presses (key down, character, key up) into the focused element"},
}

// ByName returns the row of the action type named name.
func ByName(name Name) (Row, bool) {
	i := slices.IndexFunc(Table, func(r Row) bool { return r.Name == name })
	if i < 0 {
		return Row{}, false
	}
	return Table[i], true
}

// ByType returns the row of action type t.
func ByType(t eventspb.ActionType) (Row, bool) {
	i := slices.IndexFunc(Table, func(r Row) bool { return r.Type == t })
	if i < 0 {
		return Row{}, false
	}
	return Table[i], true
}

// UsesElement reports whether the policy's element head chooses the
// argument of actions of type t.
func UsesElement(t eventspb.ActionType) bool { r, _ := ByType(t); return r.Element }

// UsesText reports whether the policy's text head chooses the argument of
// actions of type t.
func UsesText(t eventspb.ActionType) bool { r, _ := ByType(t); return r.Text }

// UsesPoint reports whether the policy's point head chooses the (first)
// point of actions of type t.
func UsesPoint(t eventspb.ActionType) bool { r, _ := ByType(t); return r.Point }

// UsesToPoint reports whether the point head's destination row chooses the
// second point of actions of type t (a drag's release).
func UsesToPoint(t eventspb.ActionType) bool { r, _ := ByType(t); return r.ToPoint }

// names lists the table's names for error messages: "a, b or c".
func names() string {
	out := make([]string, len(Table))
	for i, r := range Table {
		out[i] = string(r.Name)
	}
	return strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1]
}

// ToProto is a's event form (the fields of its type; the caller adds the
// envelope, the state it acted on and the policy's facts). A select_option
// of several options carries them all in options (the first in text too).
func ToProto(a Action) (*eventspb.Action, error) {
	r, ok := ByName(a.Type)
	if !ok {
		return nil, fmt.Errorf("unable to convert action %q: unknown type (want %s)", a.Type, names())
	}
	ev := &eventspb.Action{Type: r.Type, Bid: a.BID, Key: a.Key, Url: a.URL,
		DeltaX: float32(a.DX), DeltaY: float32(a.DY), ToBid: a.ToBID, Raw: a.String()}
	if r.Target == TargetPoint || a.Type == Scroll && a.BID == "" {
		ev.X, ev.Y, ev.ToX, ev.ToY = float32(a.X), float32(a.Y), float32(a.ToX), float32(a.ToY)
	}
	switch a.Type {
	case SelectOption:
		if len(a.Options) > 0 {
			ev.Text = a.Options[0]
		}
		if len(a.Options) > 1 {
			ev.Options = slices.Clone(a.Options)
		}
	default:
		ev.Text = a.Text
	}
	return ev, nil
}

// FromProto is the env form of event e. Scroll deltas and points are as
// recorded (in wire-frame pixels: the actor scales them); noop waits DefaultNoopWait
// (the event has no wait: the actor sets its own).
func FromProto(e *eventspb.Action) (Action, error) {
	r, ok := ByType(e.GetType())
	if !ok {
		return Action{}, fmt.Errorf("unable to execute action type %s", e.GetType())
	}
	a := Action{Type: r.Name}
	switch r.Name {
	case Noop:
		a.WaitMS = DefaultNoopWait
	case Click:
		a.BID = e.GetBid()
	case Fill:
		a.BID, a.Text = e.GetBid(), e.GetText()
	case SelectOption:
		a.BID, a.Options = e.GetBid(), []string{e.GetText()}
		if len(e.GetOptions()) > 1 {
			a.Options = slices.Clone(e.GetOptions())
		}
	case Scroll:
		// With a bid, x and y only record its centre (the policy's
		// element head sets both): the bid places the wheel.
		a.DX, a.DY, a.BID = float64(e.GetDeltaX()), float64(e.GetDeltaY()), e.GetBid()
		if a.BID == "" {
			a.X, a.Y = float64(e.GetX()), float64(e.GetY())
		}
	case Press:
		a.BID, a.Key = e.GetBid(), e.GetKey()
	case Goto:
		a.URL = e.GetUrl()
	case SendMsg, KeyboardType:
		a.Text = e.GetText()
	case MouseClick, MouseMove:
		a.X, a.Y = float64(e.GetX()), float64(e.GetY())
	case DblClick, Hover:
		a.BID = e.GetBid()
	case DragAndDrop:
		a.BID, a.ToBID = e.GetBid(), e.GetToBid()
	case MouseDragAndDrop:
		a.X, a.Y, a.ToX, a.ToY = float64(e.GetX()), float64(e.GetY()), float64(e.GetToX()), float64(e.GetToY())
	}
	return a, nil
}

// Format is event e's BrowserGym string form (its raw field): a noop's
// without its wait, which the event does not carry (Parse reads it back
// with BrowserGym's default, as FromProto does).
func Format(e *eventspb.Action) (string, error) {
	a, err := FromProto(e)
	if err != nil {
		return "", err
	}
	if a.Type == Noop {
		return string(Noop) + "()", nil
	}
	return a.String(), nil
}
