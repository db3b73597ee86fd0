package catalog

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/asyncwebrl/asyncwebrl/services/internal/enum"
)

// Split is a part of the train/test split by site.
type Split string

const (
	// SplitTrain serves the training sites only; test sites get a 404.
	SplitTrain Split = "train"
	// SplitTest serves the test sites only.
	SplitTest Split = "test"
	// SplitAll serves every site (evaluation and the oracle tests).
	SplitAll Split = "all"
)

// ParseSplit parses "train", "test" or "all".
func ParseSplit(s string) (Split, error) {
	return enum.Parse("split", s, SplitTrain, SplitTest, SplitAll)
}

// Serves reports whether a server of split s serves a site of split site.
func (s Split) Serves(site Split) bool { return s == SplitAll || s == site }

// Site is one visual theme and layout of a family. Every family has the same
// four sites; the theme changes colours, fonts and shapes (themes.css), the
// variant changes layouts and wording in the generators.
type Site struct {
	Name    string
	Variant int
	// Words used by the generators, so that sites differ in wording too.
	SubmitLabel string
	SearchLabel string
	SaveLabel   string
}

// Sites are the sites of every family, in a fixed order.
var Sites = []Site{
	{Name: "aurora", Variant: 0, SubmitLabel: "Submit", SearchLabel: "Search", SaveLabel: "Save"},
	{Name: "basalt", Variant: 1, SubmitLabel: "Send", SearchLabel: "Find", SaveLabel: "Save changes"},
	{Name: "cedar", Variant: 2, SubmitLabel: "OK", SearchLabel: "Go", SaveLabel: "Apply"},
	{Name: "dune", Variant: 3, SubmitLabel: "Done", SearchLabel: "Look up", SaveLabel: "Update"},
}

// SiteByName returns the site called name.
func SiteByName(name string) (Site, bool) {
	for _, s := range Sites {
		if s.Name == name {
			return s, true
		}
	}
	return Site{}, false
}

// TestSite is the one test site of a family: a hash of the family's name picks
// it, so the split is deterministic, needs no table, and puts different
// themes in the test split of different families.
func TestSite(family string) string {
	h := sha256.Sum256([]byte("split/" + family))
	return Sites[binary.BigEndian.Uint32(h[:4])%uint32(len(Sites))].Name
}

// SiteSplit returns the split of a family's site.
func SiteSplit(family, site string) Split {
	if TestSite(family) == site {
		return SplitTest
	}
	return SplitTrain
}

// SitesOf returns the names of the sites of a family that a server of split
// s serves.
func SitesOf(family string, s Split) []string {
	var out []string
	for _, site := range Sites {
		if s.Serves(SiteSplit(family, site.Name)) {
			out = append(out, site.Name)
		}
	}
	return out
}
