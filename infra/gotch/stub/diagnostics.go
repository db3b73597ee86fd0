package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// inFunction matches gcc's "FILE: In function 'void atg_x(tensor*, ...)':"
// context line, which names the failing wrapper directly. gcc quotes with
// ‘’ unless LC_ALL=C, so both quote styles match.
var inFunction = regexp.MustCompile(`In function ['‘][^'’]*\b(atg_[A-Za-z0-9_]+)\(`)

// findFailing returns, sorted, the wrappers of src that gcc's diagnostics
// point into. Every diagnostic located in the generated file (an error, or
// the "required from here" of a template error raised inside a torch header)
// lies inside the wrapper that triggered it. diag must come from
// g++ -w -fdiagnostics-plain-output, so that warnings do not count and each
// diagnostic is one line.
func findFailing(src, diag, srcName string) ([]string, error) {
	ws, err := parseWrappers(strings.Split(src, "\n"))
	if err != nil {
		return nil, err
	}
	loc := regexp.MustCompile(`(?:^|[/ ])` + regexp.QuoteMeta(filepath.Base(srcName)) + `:(\d+):\d+:`)
	found := map[string]bool{}
	for n, line := range strings.Split(diag, "\n") {
		if m := inFunction.FindStringSubmatch(line); m != nil && strings.Contains(line, filepath.Base(srcName)) {
			found[m[1]] = true
		}
		m := loc.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		l, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, fmt.Errorf("unable to parse diagnostic line %d: %w", n+1, err)
		}
		w, ok := enclosing(ws, l-1)
		if !ok {
			return nil, fmt.Errorf("unable to attribute diagnostic line %d to a wrapper (outside every atg_ function): %s", n+1, line)
		}
		found[w.name] = true
	}
	names := make([]string, 0, len(found))
	for name := range found {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// enclosing returns the wrapper whose lines include the 0-based line l.
func enclosing(ws []wrapper, l int) (wrapper, bool) {
	i := sort.Search(len(ws), func(i int) bool { return ws[i].end >= l })
	if i < len(ws) && ws[i].start <= l {
		return ws[i], true
	}
	return wrapper{}, false
}
