package catalog

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Size is a width and a height in CSS pixels.
type Size struct {
	W int `json:"w"`
	H int `json:"h"`
}

func (s Size) String() string { return fmt.Sprintf("%dx%d", s.W, s.H) }

// Viewports of the task pages: the MiniWoB area for easy tasks (and for
// MiniWoB++ and third-party pages), larger ones for forms and multi-page
// sites.
var (
	ViewportSmall  = Size{W: 160, H: 210}
	ViewportMedium = Size{W: 240, H: 320}
	ViewportLarge  = Size{W: 400, H: 520}
)

// The time limits of an episode per tier of the built-in families.
const (
	easyTime   = 20 * time.Second
	mediumTime = 40 * time.Second
	hardTime   = 120 * time.Second
)

// Family is one built-in task family: a row of the table that webenv's
// generators are registered against.
type Family struct {
	Name     string
	Tier     Tier
	Desc     string
	Viewport Size
	MaxTime  time.Duration
}

// builtin is the table of the built-in families, easy first.
var builtin = []Family{
	// The easy tier: one page, 1–3 facts, 1–3 steps (the MiniWoB area size).
	{Name: "click-button", Tier: Easy, Desc: "click the button with a given label", Viewport: ViewportSmall, MaxTime: easyTime},
	{Name: "click-link", Tier: Easy, Desc: "click a given link in a paragraph", Viewport: ViewportSmall, MaxTime: easyTime},
	{Name: "pick-color", Tier: Easy, Desc: "click the swatch of a named colour (no text: needs vision)", Viewport: ViewportSmall, MaxTime: easyTime},
	{Name: "tick-checkboxes", Tier: Easy, Desc: "tick the named checkboxes, leave the others, submit", Viewport: ViewportSmall, MaxTime: easyTime},
	{Name: "type-text", Tier: Easy, Desc: "type a given text into a box and submit", Viewport: ViewportSmall, MaxTime: easyTime},
	{Name: "focus-and-type", Tier: Easy, Desc: "focus the named field, type with real keys, press Enter", Viewport: ViewportSmall, MaxTime: easyTime},
	{Name: "choose-radio", Tier: Easy, Desc: "choose a radio option and submit", Viewport: ViewportSmall, MaxTime: easyTime},
	{Name: "dismiss-dialog", Tier: Easy, Desc: "close a modal dialog with the named button", Viewport: ViewportSmall, MaxTime: easyTime},
	{Name: "click-shape", Tier: Easy, Desc: "click the shape of a given colour and form (needs vision)", Viewport: ViewportSmall, MaxTime: easyTime},
	{Name: "copy-text", Tier: Easy, Desc: "copy a code shown on the page into a box and submit", Viewport: ViewportSmall, MaxTime: easyTime},
	{Name: "click-in-list", Tier: Easy, Desc: "find an item in a scrolling list and click it", Viewport: ViewportSmall, MaxTime: easyTime},
	// The medium tier: 4–6 facts — forms with validation, tabs, dropdowns,
	// a date, an inbox, settings, a wizard, and two small multi-page sites.
	{Name: "login-form", Tier: Medium, Desc: "log in with a username, a password and the remember-me box", Viewport: ViewportMedium, MaxTime: mediumTime},
	{Name: "signup-form", Tier: Medium, Desc: "fill a multi-field form that the server validates", Viewport: ViewportMedium, MaxTime: mediumTime},
	{Name: "tabs", Tier: Medium, Desc: "switch to a tab, set a field and a box, save", Viewport: ViewportMedium, MaxTime: mediumTime},
	{Name: "dropdowns", Tier: Medium, Desc: "pick options in three dropdowns and add", Viewport: ViewportMedium, MaxTime: mediumTime},
	{Name: "date-picker", Tier: Medium, Desc: "set a date with day, month and year fields", Viewport: ViewportMedium, MaxTime: mediumTime},
	{Name: "email-reply", Tier: Medium, Desc: "open an email in an inbox, reply with a text, send", Viewport: ViewportMedium, MaxTime: mediumTime},
	{Name: "settings-toggles", Tier: Medium, Desc: "turn settings on and off, leave the rest, save", Viewport: ViewportMedium, MaxTime: mediumTime},
	{Name: "wizard-form", Tier: Medium, Desc: "go through a three-step wizard and finish", Viewport: ViewportMedium, MaxTime: mediumTime},
	{Name: "navigate-pages", Tier: Medium, Desc: "navigate two levels of pages and press a button there", Viewport: ViewportMedium, MaxTime: mediumTime},
	{Name: "search-open", Tier: Medium, Desc: "search, open the named result, file it in a folder", Viewport: ViewportMedium, MaxTime: mediumTime},
	// The hard tier: multi-page sites of 7 or more facts.
	{Name: "account-update", Tier: Hard, Desc: "sign in, update the profile, save, sign out", Viewport: ViewportLarge, MaxTime: hardTime},
	{Name: "find-and-report", Tier: Hard, Desc: "find a person's manager across directory pages and report three details", Viewport: ViewportLarge, MaxTime: hardTime},
	{Name: "flight-booking", Tier: Hard, Desc: "search flights, pick the cheapest, enter the passenger, confirm", Viewport: ViewportLarge, MaxTime: hardTime},
	{Name: "forum-post", Tier: Hard, Desc: "sign in, open a forum category, post a thread with a tag", Viewport: ViewportLarge, MaxTime: hardTime},
	{Name: "shop-checkout", Tier: Hard, Desc: "search, filter by brand, add the cheapest matching item, check out with an address", Viewport: ViewportLarge, MaxTime: hardTime},
}

// BuiltinFamilies returns the table of the built-in families, easy first.
func BuiltinFamilies() []Family { return slices.Clone(builtin) }

// Builtin returns the built-in family called name.
func Builtin(name string) (Family, bool) {
	for _, f := range builtin {
		if f.Name == name {
			return f, true
		}
	}
	return Family{}, false
}

// SiteInfo is a site and its split.
type SiteInfo struct {
	Name  string `json:"name"`
	Split Split  `json:"split"`
}

// FamilyInfo describes a family of any suite for listings and scheduling.
type FamilyInfo struct {
	Name       string     `json:"name"`
	Tier       Tier       `json:"tier"`
	Desc       string     `json:"desc"`
	Viewport   Size       `json:"viewport"`
	MaxTimeSec float64    `json:"max_time_s"`
	Sites      []SiteInfo `json:"sites"`
	ThirdParty bool       `json:"third_party,omitempty"`
	// Suite is the suite the family belongs to.
	Suite Suite `json:"suite,omitempty"`
	// Steps, Unsupported and WGE describe a MiniWoB++ task (MiniWoBTask).
	Steps       int    `json:"steps,omitempty"`
	Unsupported string `json:"unsupported,omitempty"`
	WGE         bool   `json:"wge,omitempty"`
}

// Families lists the built-in families, easy first, each with its sites
// and their split.
func Families() []FamilyInfo {
	out := make([]FamilyInfo, 0, len(builtin))
	for _, f := range builtin {
		fi := FamilyInfo{Name: f.Name, Tier: f.Tier, Desc: f.Desc, Viewport: f.Viewport, MaxTimeSec: f.MaxTime.Seconds(), Suite: SuiteBuiltin}
		for _, s := range Sites {
			fi.Sites = append(fi.Sites, SiteInfo{Name: s.Name, Split: SiteSplit(f.Name, s.Name)})
		}
		out = append(out, fi)
	}
	slices.SortStableFunc(out, func(a, b FamilyInfo) int { return int(a.Tier) - int(b.Tier) })
	return out
}

// PrintFamilies writes a list of families (Families, SuiteFamilies, a
// server's) in format "text" (a table: family, tier, viewport, sites with
// their split, description) or "json".
func PrintFamilies(w io.Writer, format string, fams []FamilyInfo) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(fams); err != nil {
			return fmt.Errorf("unable to write families: %w", err)
		}
		return nil
	case "", "text":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "FAMILY\tTIER\tVIEWPORT\tTRAIN SITES\tTEST SITES\tDESCRIPTION")
		for _, f := range fams {
			var train, test []string
			for _, s := range f.Sites {
				if s.Split == SplitTest {
					test = append(test, s.Name)
				} else {
					train = append(train, s.Name)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Name, f.Tier, f.Viewport,
				strings.Join(train, ","), strings.Join(test, ","), f.Desc)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("unable to write families: %w", err)
		}
		return nil
	}
	return fmt.Errorf("unknown format %q: want text or json", format)
}
