package catalog

import (
	"fmt"

	"github.com/asyncwebrl/asyncwebrl/services/internal/enum"
)

// Tier is a family's difficulty, by its number of facts (and so of steps).
type Tier int

const (
	// Unrated is the tier of pages that webenv did not generate
	// (third-party pages).
	Unrated Tier = iota
	// Easy tasks have 1–3 facts (1–3 steps).
	Easy
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
func ParseTier(s string) (Tier, error) { return enum.ParseNamed("tier", s, Tiers...) }

// Tiers are the rated tiers, easiest first.
var Tiers = []Tier{Easy, Medium, Hard}

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
