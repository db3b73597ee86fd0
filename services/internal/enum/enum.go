package enum

import (
	"fmt"
	"strings"
)

// Parse returns the value of vals that s names, ignoring case and
// surrounding space, or an error naming what was asked for and every value.
func Parse[T ~string](what, s string, vals ...T) (T, error) {
	for _, v := range vals {
		if strings.EqualFold(strings.TrimSpace(s), string(v)) {
			return v, nil
		}
	}
	var zero T
	return zero, Unknown(what, s, vals...)
}

// ParseNamed is Parse for values that print their names (an int-valued
// enum with a String method).
func ParseNamed[T fmt.Stringer](what, s string, vals ...T) (T, error) {
	for _, v := range vals {
		if strings.EqualFold(strings.TrimSpace(s), v.String()) {
			return v, nil
		}
	}
	var zero T
	return zero, Unknown(what, s, vals...)
}

// Unknown is the error for s, which names none of vals: `unknown what "s":
// want a, b or c`.
func Unknown[T any](what, s string, vals ...T) error {
	return fmt.Errorf("unknown %s %q: want %s", what, s, List(vals...))
}

// List writes vals as "a", "a or b", "a, b or c".
func List[T any](vals ...T) string {
	names := make([]string, len(vals))
	for i, v := range vals {
		names[i] = fmt.Sprint(v)
	}
	switch len(names) {
	case 0:
		return "nothing"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
