package catalog

import (
	"fmt"
	"strings"
)

// Suite names a set of tasks: the built-in families, the MiniWoB++
// benchmark, or both.
type Suite string

// The suites.
const (
	SuiteBuiltin Suite = "builtin"
	SuiteMiniWoB Suite = "miniwob"
	SuiteAll     Suite = "all"
)

// ParseSuite parses a suite name ("" is builtin).
func ParseSuite(s string) (Suite, error) {
	switch Suite(strings.ToLower(strings.TrimSpace(s))) {
	case "", SuiteBuiltin:
		return SuiteBuiltin, nil
	case SuiteMiniWoB:
		return SuiteMiniWoB, nil
	case SuiteAll:
		return SuiteAll, nil
	}
	return "", fmt.Errorf("unknown suite %q: want builtin, miniwob or all", s)
}

// HasBuiltin reports whether the suite holds the built-in families.
func (s Suite) HasBuiltin() bool { return s == SuiteBuiltin || s == SuiteAll || s == "" }

// HasMiniWoB reports whether the suite holds the MiniWoB++ tasks.
func (s Suite) HasMiniWoB() bool { return s == SuiteMiniWoB || s == SuiteAll }
