package cmdkit

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// SubFlags takes a subcommand's own flags (-name v, --name v, -name=v; the
// boolean ones take no value) out of args; everything else is returned in
// order, for config.Parse.
func SubFlags(args []string, valued, boolean []string) (vals map[string]string, rest []string, err error) {
	vals = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case !strings.HasPrefix(a, "-"):
			rest = append(rest, a)
		case slices.Contains(boolean, name):
			if !hasVal {
				val = "true"
			}
			vals[name] = val
		case slices.Contains(valued, name):
			if !hasVal {
				if i+1 >= len(args) {
					return nil, nil, fmt.Errorf("flag --%s needs a value", name)
				}
				i++
				val = args[i]
			}
			vals[name] = val
		default:
			rest = append(rest, a)
		}
	}
	return vals, rest, nil
}

// ArgGiven reports whether flag name is on the command line (-name,
// --name, -name=v), whatever the environment says: the drill's cluster
// choice ignores it, as a shell may set it for other commands.
func ArgGiven(args []string, name string) bool {
	for _, a := range args {
		n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && n == name {
			return true
		}
	}
	return false
}

// FlagGiven reports whether the binary's flag name is on the command line
// or its ASYNCWEBRL_* variable is set: a benchmark's default for it must
// not override the user's.
func FlagGiven(args []string, name string) bool {
	return os.Getenv("ASYNCWEBRL_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))) != "" || ArgGiven(args, name)
}
