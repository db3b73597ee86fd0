package webenv

import (
	"fmt"
	"html"
	"strings"
)

// esc escapes text and attribute values for HTML.
func esc(s string) string { return html.EscapeString(s) }

// hb builds HTML.
type hb struct{ strings.Builder }

// f appends a formatted fragment; arguments are not escaped, so callers pass
// esc(...) for text.
func (b *hb) f(format string, args ...any) { fmt.Fprintf(&b.Builder, format, args...) }

// sel returns a CSS attribute selector [name="value"], quoted for CSS.
func sel(name, value string) string {
	v := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(value)
	return fmt.Sprintf(`[%s="%s"]`, name, v)
}

// slug turns a label into a key fragment: lower case, spaces as dashes.
func slug(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), "-"))
}
