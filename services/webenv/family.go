package webenv

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Tier is a family's difficulty, by its number of facts (and so of steps).
type Tier int

const (
	// Easy tasks have 1–3 facts (1–3 steps).
	Easy Tier = iota + 1
	// Medium tasks have 4–6 facts.
	Medium
	// Hard tasks have 7 or more facts, over several pages.
	Hard
)

// StepBudget is the number of actions an episode of the tier may take
// before it is truncated: easy tasks take one or two, medium ones a few
// over a page or two, hard ones several pages.
func (t Tier) StepBudget() uint32 {
	switch t {
	case Easy:
		return 6
	case Medium:
		return 12
	}
	return 20
}

// ParseTier parses a tier name (easy, medium, hard).
func ParseTier(s string) (Tier, error) {
	for _, t := range []Tier{Easy, Medium, Hard} {
		if strings.EqualFold(s, t.String()) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown tier %q: want easy, medium or hard", s)
}

func (t Tier) String() string {
	switch t {
	case Easy:
		return "easy"
	case Medium:
		return "medium"
	case Hard:
		return "hard"
	case Unrated:
		return "unrated"
	}
	return "unknown"
}

// MarshalText makes tiers readable in JSON.
func (t Tier) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads a tier's name.
func (t *Tier) UnmarshalText(b []byte) error {
	for _, c := range []Tier{Unrated, Easy, Medium, Hard} {
		if c.String() == string(b) {
			*t = c
			return nil
		}
	}
	return fmt.Errorf("unknown tier %q", b)
}

// Size is a width and a height in CSS pixels.
type Size struct {
	W int `json:"w"`
	H int `json:"h"`
}

func (s Size) String() string { return fmt.Sprintf("%dx%d", s.W, s.H) }

// Sizes of the task pages: the MiniWoB area for easy tasks, larger ones for
// forms and multi-page sites.
var (
	sizeSmall  = Size{W: 160, H: 210}
	sizeMedium = Size{W: 240, H: 320}
	sizeLarge  = Size{W: 400, H: 520}
)

// Family is one task family: a generator of problems from (site, seed).
type Family struct {
	Name     string
	Tier     Tier
	Desc     string
	Viewport Size
	MaxTime  time.Duration
	gen      func(g *gen)
}

// OracleStep is one step of a problem's scripted solution: an operation on
// the element that Sel (a CSS selector) finds on the current page. The
// oracle turns it into an env action on that element's bid.
type OracleStep struct {
	// Op is click, fill, select, press (Text is the key), type (press each
	// character of Text), msg (send Text to the user) or scroll.
	Op   string `json:"op"`
	Sel  string `json:"sel,omitempty"`
	Text string `json:"text,omitempty"`
}

// PageRequest is a request for a page of a multi-page site.
type PageRequest struct {
	// Base is the episode's URL prefix ("/e/<id>"); links start with it.
	Base   string
	Method string
	// Path is the page's path below Base, starting with "/".
	Path  string
	Query url.Values
	Form  url.Values
	State *State
}

// PageResult is a page of a multi-page site, a redirect, or not found.
type PageResult struct {
	HTML     string
	Redirect string // a path below Base
	End      bool   // the request ends the episode (a terminal submit)
	EndKey   string // the key of the terminal event, for the facts
	EndValue string
	NotFound bool
}

// Problem is one generated task: what the page shows, how the server scores
// it and how the oracle solves it.
type Problem struct {
	Family      string
	Site        string
	Seed        int64
	Tier        Tier
	Viewport    Size
	MaxTime     time.Duration
	Instruction string
	// HTML is the start page's #area; "{{EP}}" stands for the episode's URL
	// prefix. Multi-page sites leave it empty and render their page "/".
	HTML  string
	Facts []Fact
	// Init holds the reporting fields' initial values (pre-ticked boxes,
	// pre-selected options), so that facts see the page as it is drawn.
	Init map[string]string
	// EndKeys are the keys of the clicks that end the episode.
	EndKeys map[string]bool
	// EnterEnds makes Enter in a reporting field end the episode.
	EnterEnds bool
	// MsgEnds makes a message to the user end the episode.
	MsgEnds bool
	// Validate returns the field errors that stop a terminal event (server
	// side form validation); nil means valid.
	Validate func(st *State) map[string]string
	// Pages renders the pages of a multi-page site.
	Pages func(req PageRequest) PageResult
	// Plan is the scripted solution.
	Plan []OracleStep
}

// gen is the context of one generator run.
type gen struct {
	*rng
	site Site
	p    *Problem
}

func (g *gen) fact(f Fact) { g.p.Facts = append(g.p.Facts, f) }
func (g *gen) plan(op, sel, text string) {
	g.p.Plan = append(g.p.Plan, OracleStep{Op: op, Sel: sel, Text: text})
}
func (g *gen) endOn(keys ...string)             { addKeys(&g.p.EndKeys, keys) }
func (g *gen) instr(format string, args ...any) { g.p.Instruction = fmt.Sprintf(format, args...) }
func addKeys(m *map[string]bool, keys []string) {
	if *m == nil {
		*m = map[string]bool{}
	}
	for _, k := range keys {
		(*m)[k] = true
	}
}

var registry []*Family

func register(f *Family) { registry = append(registry, f) }

// family returns the registered family called name.
func family(name string) (*Family, bool) {
	for _, f := range registry {
		if f.Name == name {
			return f, true
		}
	}
	return nil, false
}

// ErrNotFound is the class of errors for unknown families, sites and seeds;
// the server answers them with a 404.
type ErrNotFound struct{ Reason string }

func (e *ErrNotFound) Error() string { return e.Reason }

// Generate builds the problem of (family, site, seed). It is the one
// generator that the pages, the scoring and the oracle share.
func Generate(familyName, site string, seed int64) (*Problem, error) {
	f, ok := family(familyName)
	if !ok {
		return nil, &ErrNotFound{Reason: fmt.Sprintf("unknown task family %q", familyName)}
	}
	s, ok := SiteByName(site)
	if !ok {
		return nil, &ErrNotFound{Reason: fmt.Sprintf("unknown site %q of family %s", site, familyName)}
	}
	if seed < 0 {
		return nil, &ErrNotFound{Reason: fmt.Sprintf("unknown seed %d: seeds are non-negative", seed)}
	}
	p := &Problem{Family: f.Name, Site: s.Name, Seed: seed, Tier: f.Tier, Viewport: f.Viewport, MaxTime: f.MaxTime}
	f.gen(&gen{rng: newRNG(f.Name, s.Name, seed), site: s, p: p})
	return p, nil
}

// SiteInfo is a site and its split.
type SiteInfo struct {
	Name  string `json:"name"`
	Split Split  `json:"split"`
}

// FamilyInfo describes a family for listings.
type FamilyInfo struct {
	Name       string     `json:"name"`
	Tier       Tier       `json:"tier"`
	Desc       string     `json:"desc"`
	Viewport   Size       `json:"viewport"`
	MaxTimeSec float64    `json:"max_time_s"`
	Sites      []SiteInfo `json:"sites"`
	ThirdParty bool       `json:"third_party,omitempty"`
	// Suite is the suite the family belongs to (miniwob.go).
	Suite Suite `json:"suite,omitempty"`
	// Steps, Unsupported and WGE describe a MiniWoB++ task (MiniWoBTask).
	Steps       int    `json:"steps,omitempty"`
	Unsupported string `json:"unsupported,omitempty"`
	WGE         bool   `json:"wge,omitempty"`
}

// Families lists the built-in families, easy first.
func Families() []FamilyInfo {
	out := make([]FamilyInfo, 0, len(registry))
	for _, f := range registry {
		fi := FamilyInfo{Name: f.Name, Tier: f.Tier, Desc: f.Desc, Viewport: f.Viewport, MaxTimeSec: f.MaxTime.Seconds(), Suite: SuiteBuiltin}
		for _, s := range Sites {
			fi.Sites = append(fi.Sites, SiteInfo{Name: s.Name, Split: SiteSplit(f.Name, s.Name)})
		}
		out = append(out, fi)
	}
	slices.SortStableFunc(out, func(a, b FamilyInfo) int { return int(a.Tier) - int(b.Tier) })
	return out
}

// PrintFamilies writes the family list in format "text" (a table: family,
// tier, sites with their split) or "json".
func PrintFamilies(w io.Writer, format string) error {
	return printFamilies(w, format, Families())
}

func printFamilies(w io.Writer, format string, fams []FamilyInfo) error {
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
