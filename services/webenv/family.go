package webenv

import (
	"fmt"
	"net/url"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

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
	Tier        catalog.Tier
	Viewport    catalog.Size
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
	site catalog.Site
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

// generators holds the generator of each built-in family, by name; the
// family's tier, viewport and time limit are its row in the catalogue
// (catalog.Builtin).
var generators = map[string]func(g *gen){}

// register adds the generator of the catalogue's family name.
func register(name string, generate func(g *gen)) {
	if _, dup := generators[name]; dup {
		panic("webenv: two generators for family " + name)
	}
	generators[name] = generate
}

// family returns the built-in family called name and its generator.
func family(name string) (catalog.Family, func(g *gen), bool) {
	f, ok := catalog.Builtin(name)
	generate := generators[name]
	if !ok || generate == nil {
		return catalog.Family{}, nil, false
	}
	return f, generate, true
}

// ErrNotFound is the class of errors for unknown families, sites and seeds;
// the server answers them with a 404.
type ErrNotFound struct{ Reason string }

func (e *ErrNotFound) Error() string { return e.Reason }

// Generate builds the problem of (family, site, seed). It is the one
// generator that the pages, the scoring and the oracle share.
func Generate(familyName, site string, seed int64) (*Problem, error) {
	f, generate, ok := family(familyName)
	if !ok {
		return nil, &ErrNotFound{Reason: fmt.Sprintf("unknown task family %q", familyName)}
	}
	s, ok := catalog.SiteByName(site)
	if !ok {
		return nil, &ErrNotFound{Reason: fmt.Sprintf("unknown site %q of family %s", site, familyName)}
	}
	if seed < 0 {
		return nil, &ErrNotFound{Reason: fmt.Sprintf("unknown seed %d: seeds are non-negative", seed)}
	}
	p := &Problem{Family: f.Name, Site: s.Name, Seed: seed, Tier: f.Tier, Viewport: f.Viewport, MaxTime: f.MaxTime}
	generate(&gen{rng: newRNG(f.Name, s.Name, seed), site: s, p: p})
	return p, nil
}
