package config

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// KnownTargets lists the components in start order: the task server first,
// then producers of a topic before its consumers. Shutdown runs in reverse.
var KnownTargets = []string{"webenv", "actor", "joiner", "learner", "recorder", "dashboard", "reporter"}

// Subcommands are the binary's non-service commands.
var Subcommands = []string{"topics", "webenv", "query", "audit", "version", "bench", "replay", "health", "policy", "drill", "soak"}

// ParseTargets expands "all" and checks every name.
func ParseTargets(s string) ([]string, error) {
	names := SplitList(s)
	if len(names) == 0 {
		return nil, fmt.Errorf("invalid -target: empty (want all or a comma list of %s)", strings.Join(KnownTargets, ", "))
	}
	want := map[string]bool{}
	for _, n := range names {
		if n == "all" {
			for _, k := range KnownTargets {
				want[k] = true
			}
			continue
		}
		if !slices.Contains(KnownTargets, n) {
			return nil, fmt.Errorf("unknown target %q (want all or a comma list of %s)", n, strings.Join(KnownTargets, ", "))
		}
		want[n] = true
	}
	var out []string
	for _, k := range KnownTargets { // registry order, whatever order was asked
		if want[k] {
			out = append(out, k)
		}
	}
	return out, nil
}

func checkHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("want host:port")
	}
	_ = host
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("bad port %q", port)
	}
	return nil
}
