package webenv

import (
	"slices"
	"strings"
)

// Event is one thing the page core reports to the server: a field's new value
// ("set"), a click on a reporting element ("click"), Enter in a field
// ("enter"), a message to the user ("msg") or the page's own time-out
// ("timeout").
type Event struct {
	T string `json:"t"`
	K string `json:"k,omitempty"`
	V string `json:"v,omitempty"`
}

// State is what the server knows of one episode: the values typed and
// picked, the clicks, the pages visited and the site's own records. Facts are
// functions of it.
type State struct {
	// Values holds the last value of each reporting field, by key.
	Values map[string]string
	// Clicks holds the click and enter events in order.
	Clicks []Event
	// Visits holds the paths of the episode's pages, in order of request
	// ("/" is the start page).
	Visits []string
	// Messages holds the messages sent to the user.
	Messages []string
	// End is the event that ended the episode, when one did.
	End *Event
	// Site holds the multi-page site's own records (cart, login, orders).
	Site map[string]string
	// Cart holds item ids, in the order added.
	Cart []string
}

func newState() *State {
	return &State{Values: map[string]string{}, Site: map[string]string{}}
}

// Clicked reports whether a click (or enter) with key k and value v happened;
// an empty v matches any value.
func (st *State) Clicked(k, v string) bool {
	for _, e := range st.Clicks {
		if e.K == k && (v == "" || e.V == v) {
			return true
		}
	}
	return false
}

// Visited reports whether a page whose path starts with prefix was visited.
func (st *State) Visited(prefix string) bool {
	for _, p := range st.Visits {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// Ended reports whether the episode ended with an event of key k and value v
// (an empty v matches any value).
func (st *State) Ended(k, v string) bool {
	return st.End != nil && st.End.K == k && (v == "" || st.End.V == v)
}

// Said reports whether a message to the user contains s (case-insensitive).
func (st *State) Said(s string) bool {
	s = strings.ToLower(s)
	return slices.ContainsFunc(st.Messages, func(m string) bool { return strings.Contains(strings.ToLower(m), s) })
}

// Fact is one checkable statement of a task's rubric. Facts are grouped; a
// group is a sub-goal (for the sub-goal shaping term).
type Fact struct {
	Name  string
	Group string
	Check func(st *State) bool
}

// FactResult is a fact's outcome, as reported in the reward info.
type FactResult struct {
	Name  string `json:"name"`
	Group string `json:"group"`
	Met   bool   `json:"met"`
}

// Evaluate checks every fact against st. Partial credit is the fraction of
// facts met (the dense signal); success means that every fact holds.
func Evaluate(facts []Fact, st *State) (results []FactResult, partial float64, success bool) {
	met := 0
	results = make([]FactResult, len(facts))
	for i, f := range facts {
		ok := f.Check != nil && f.Check(st)
		results[i] = FactResult{Name: f.Name, Group: f.Group, Met: ok}
		if ok {
			met++
		}
	}
	if len(facts) == 0 {
		return results, 0, false
	}
	return results, float64(met) / float64(len(facts)), met == len(facts)
}

// GroupsMet returns the names of the groups whose facts all hold.
func GroupsMet(results []FactResult) []string {
	all := map[string]bool{}
	var order []string
	for _, r := range results {
		if _, seen := all[r.Group]; !seen {
			all[r.Group] = true
			order = append(order, r.Group)
		}
		if !r.Met {
			all[r.Group] = false
		}
	}
	var out []string
	for _, g := range order {
		if all[g] {
			out = append(out, g)
		}
	}
	return out
}

// Score is the server's verdict on an episode, sent to the page after each
// batch of events and embedded in each page of a multi-page site. The page
// core copies it to WOB_REWARD_INFO and ends the episode when Done.
type Score struct {
	Episode string            `json:"episode"`
	Version int               `json:"version"`
	Partial float64           `json:"partial"`
	Success bool              `json:"success"`
	Done    bool              `json:"done"`
	Raw     float64           `json:"raw"`
	Reason  string            `json:"reason"`
	Facts   []FactResult      `json:"facts"`
	Errors  map[string]string `json:"errors,omitempty"`
}

// factEq is a fact that the value of key equals want, ignoring surrounding
// space (and case when fold is set).
func factEq(name, group, key, want string, fold bool) Fact {
	return Fact{Name: name, Group: group, Check: func(st *State) bool {
		got := strings.TrimSpace(st.Values[key])
		if fold {
			return strings.EqualFold(got, strings.TrimSpace(want))
		}
		return got == strings.TrimSpace(want)
	}}
}

// factEnded is a fact that the episode ended with (k, v).
func factEnded(name, group, k, v string) Fact {
	return Fact{Name: name, Group: group, Check: func(st *State) bool { return st.Ended(k, v) }}
}

// factChecked is a fact that a checkbox's state is want.
func factChecked(name, group, key string, want bool) Fact {
	return Fact{Name: name, Group: group, Check: func(st *State) bool { return (st.Values[key] == "1") == want }}
}
