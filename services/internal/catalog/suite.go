package catalog

import (
	"strings"

	"github.com/asyncwebrl/asyncwebrl/services/internal/enum"
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
	if strings.TrimSpace(s) == "" {
		return SuiteBuiltin, nil
	}
	return enum.Parse("suite", s, SuiteBuiltin, SuiteMiniWoB, SuiteAll)
}

// HasBuiltin reports whether the suite holds the built-in families.
func (s Suite) HasBuiltin() bool { return s == SuiteBuiltin || s == SuiteAll || s == "" }

// HasMiniWoB reports whether the suite holds the MiniWoB++ tasks.
func (s Suite) HasMiniWoB() bool { return s == SuiteMiniWoB || s == SuiteAll }
