package cli

import (
	"fmt"
	"slices"
	"strings"
)

// subFlags takes a subcommand's own flags (-name v, --name v, -name=v; the
// boolean ones take no value) out of args; everything else is returned in
// order, for config.Parse.
func subFlags(args []string, valued, boolean []string) (vals map[string]string, rest []string, err error) {
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
