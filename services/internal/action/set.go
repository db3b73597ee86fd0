package action

import (
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/enum"
)

// Set is a named subset of the table that a policy chooses from: an
// experiment's action space, as BrowserGym's action subsets are. Each row
// says the smallest set it belongs to (Row.Set); goto and drag_and_drop are
// in none (the policy has no way to produce a URL, and a mouse drag between
// two points covers a drag between two elements).
type Set string

const (
	// SetBid is the actions on elements named by bid that the built-in
	// families need: noop, click, fill, select_option, scroll, press,
	// go_back and send_msg_to_user.
	SetBid Set = "bid"
	// SetBidCoord is SetBid and the mouse's own actions, on elements
	// (dblclick, hover) and on points of the viewport (mouse_click,
	// mouse_move, mouse_drag_and_drop), and keyboard_type (text typed as
	// key presses, for a page that listens for keys: MiniWoB++'s
	// terminal): what MiniWoB++'s pages need.
	SetBidCoord Set = "bid+coord"
)

// Sets are the named sets, smallest first.
var Sets = []Set{SetBid, SetBidCoord}

// ParseSet checks a set's name.
func ParseSet(s string) (Set, error) { return enum.Parse("action set", s, Sets...) }

// Types lists the action types of set s in the table's order.
func (s Set) Types() []eventspb.ActionType {
	var out []eventspb.ActionType
	for _, r := range Table {
		if r.Set == SetBid || r.Set == SetBidCoord && s == SetBidCoord {
			out = append(out, r.Type)
		}
	}
	return out
}
