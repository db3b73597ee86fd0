package catalog

import (
	"slices"
	"strings"
)

// miniwobDevelopment is MiniWoB++'s development set: the tasks whose
// episodes (held-out or training, read back from runs) or pages designed a
// feature, an observation field, a shaping term or a derived value, each
// with what it designed (CHANGELOG.md has the entries). Their held-out
// scores measure the design as much as the learning, so reports give them
// apart from the other tasks, which nothing was shaped for. A task joins
// when a change is designed from it; it never leaves.
var miniwobDevelopment = map[string]string{
	// Issue 16's acceptance tasks: the observation and the heads were
	// shaped for them from the start.
	"click-test":       "issue 16's acceptance task",
	"click-button":     "acceptance task; a quoted button text is no value (features v12)",
	"click-link":       "issue 16's acceptance task",
	"click-dialog":     "issue 16's acceptance task",
	"click-checkboxes": "issue 16's acceptance task; choices_made (features v11)",
	"click-option":     "acceptance task; choices_made (features v11)",
	"focus-text":       "issue 16's acceptance task",
	"enter-text":       "acceptance task; values and typing done (features v9, v12)",
	"enter-password":   "acceptance task; the value bag (features v13)",
	"login-user":       "acceptance task; typing done, pair features, introducers (features v8–v10)",
	"choose-list":      "acceptance task; is_option, choices_made, the select mask (features v7, v11, v12)",
	// Read back from the MiniWoB++ hours.
	"enter-date":          "dates as literals (the second MiniWoB++ hour)",
	"enter-time":          "times as literals (the second hour); the value bag (features v13)",
	"use-spinner":         "negative and bare numbers are literals (features v12, v13)",
	"grid-coordinate":     "id_is_value (features v14); the point head's offsets (v16)",
	"click-color":         "elements with click listeners",
	"click-shades":        "elements with click listeners",
	"social-media":        "hint and context (features v6); the finding potential; the hovered click",
	"identify-shape":      "hint and names_other (features v6)",
	"focus-text-2":        "ordinal (features v6)",
	"click-widget":        "hint_named (features v6)",
	"click-tab-2":         "the finding potential",
	"click-collapsible-2": "the finding potential",
	"navigate-tree":       "the finding potential",
	"highlight-text":      "the point head's offsets (features v16)",
	"enter-text-2":        "derived values: case variants (features v17)",
	"simple-arithmetic":   "derived values: arithmetic (features v17)",
	"simple-algebra":      "derived values: arithmetic (features v17)",
	// Designed from the scripted solutions' inexpressible steps (the
	// audit, features v18).
	"guess-number":      "derived values: a named range's integers (features v18)",
	"visual-addition":   "derived values: counts (features v18)",
	"use-colorwheel":    "derived values: a named colour's hex code (features v18)",
	"use-slider":        "the key row: arrows (features v18)",
	"copy-paste":        "the key row: the clipboard's keys (features v18)",
	"copy-paste-2":      "the key row: the clipboard's keys (features v18)",
	"scroll-text-2":     "the key row: Control+Home (features v18)",
	"click-scroll-list": "a listbox's select adds one option (features v18)",
	"terminal":          "keyboard_type, the action that types key by key (features v19)",
	"scroll-text":       "a textarea's value is the part in view; a long value's spans (features v19)",
}

// MiniWoBDevelopment says whether a MiniWoB++ task ("click-test" or
// "miniwob/click-test") is in the development set, and what it designed.
func MiniWoBDevelopment(task string) (why string, ok bool) {
	why, ok = miniwobDevelopment[strings.TrimPrefix(task, MiniWoBPrefix)]
	return why, ok
}

// MiniWoBDevelopmentSet lists the development set's tasks, sorted.
func MiniWoBDevelopmentSet() []string {
	var out []string
	for t := range miniwobDevelopment {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
