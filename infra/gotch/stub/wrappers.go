package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// wrapperStart matches the first line of a generated wrapper, e.g.
// "void atg_abs(tensor *out__, tensor self) {" or "tensor *atg_split(...) {".
// The generator puts every definition at column 0 and ends it with "}".
var wrapperStart = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_ ]*[ *](atg_[A-Za-z0-9_]+)\(.*\)\s*\{\s*$`)

// wrapper is one generated C function, located by 0-based line indexes.
type wrapper struct {
	name       string
	start, end int // first line ("... {") and last line ("}")
	// protectOpen and protectClose are the "PROTECT(" and ")" lines around the body.
	protectOpen, protectClose int
}

// parseWrappers finds every wrapper in the generated file. It fails rather
// than guess when the layout is not the one the generator writes, because a
// wrong guess would stub the wrong lines.
func parseWrappers(lines []string) ([]wrapper, error) {
	var out []wrapper
	seen := map[string]int{}
	for i := 0; i < len(lines); i++ {
		m := wrapperStart.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		w := wrapper{name: m[1], start: i, end: -1, protectOpen: -1, protectClose: -1}
		if prev, ok := seen[w.name]; ok {
			return nil, fmt.Errorf("unable to parse wrappers: %s defined at lines %d and %d", w.name, prev+1, i+1)
		}
		seen[w.name] = i
		indent := ""
		for j := i + 1; j < len(lines); j++ {
			line := lines[j]
			if line == "}" {
				w.end = j
				break
			}
			if w.protectOpen < 0 && strings.TrimSpace(line) == "PROTECT(" {
				w.protectOpen = j
				indent = line[:len(line)-len(strings.TrimLeft(line, " \t"))]
				continue
			}
			if w.protectOpen >= 0 && w.protectClose < 0 && line == indent+")" {
				w.protectClose = j
			}
		}
		if w.end < 0 || w.protectOpen < 0 || w.protectClose < 0 {
			return nil, fmt.Errorf("unable to parse wrapper %s at line %d: want a body of the form PROTECT( ... ) ending with }", w.name, i+1)
		}
		if !strings.HasPrefix(lines[i], "void ") && !hasReturnAfter(lines, w) {
			return nil, fmt.Errorf("unable to stub wrapper %s at line %d: non-void and no return after PROTECT", w.name, i+1)
		}
		out = append(out, w)
		i = w.end
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("unable to parse wrappers: no atg_ function found")
	}
	return out, nil
}

// hasReturnAfter reports whether a non-void wrapper still returns a value
// when its PROTECT body throws; otherwise a stub would fall off the end.
func hasReturnAfter(lines []string, w wrapper) bool {
	for j := w.protectClose + 1; j < w.end; j++ {
		if strings.HasPrefix(strings.TrimSpace(lines[j]), "return ") {
			return true
		}
	}
	return false
}

// stubLine is the body that replaces a wrapper's PROTECT contents. The
// message becomes the Go error, so it names the wrapper and the reason.
func stubLine(indent, name, reason string) string {
	return indent + "  throw std::runtime_error(" + strconv.Quote(name+": "+reason) + ");"
}

// applyStubs replaces the PROTECT body of every wrapper named in names with a
// throw and leaves every other line unchanged. All names must exist: a name
// that does not is a list written for another gotch version.
func applyStubs(src string, names []string, reason string) (string, error) {
	if strings.ContainsAny(reason, "\"\\\n") {
		return "", fmt.Errorf("unable to stub: reason %q must not contain quotes, backslashes or newlines", reason)
	}
	lines := strings.Split(src, "\n")
	ws, err := parseWrappers(lines)
	if err != nil {
		return "", err
	}
	byName := make(map[string]wrapper, len(ws))
	for _, w := range ws {
		byName[w.name] = w
	}
	want := map[int]string{} // protectOpen line -> wrapper name
	var missing []string
	for _, n := range names {
		w, ok := byName[n]
		if !ok {
			missing = append(missing, n)
			continue
		}
		want[w.protectOpen] = n
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("unable to stub: %d listed functions not in the generated wrappers (list for another gotch version?): %s",
			len(missing), strings.Join(missing, ", "))
	}
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		name, ok := want[i]
		if !ok {
			continue
		}
		w := byName[name]
		indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " \t"))]
		out = append(out, stubLine(indent, name, reason))
		i = w.protectClose - 1 // the loop's i++ lands on the closing ")" line
	}
	return strings.Join(out, "\n"), nil
}
