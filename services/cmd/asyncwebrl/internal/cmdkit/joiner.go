package cmdkit

import (
	"fmt"
	"strconv"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/joiner"
)

// JoinerOptions reads the joiner's ASYNCWEBRL_JOINER_* knobs through
// getenv (the joiner target's and bench joiner's; cli's newJoiner lists
// them).
func JoinerOptions(getenv func(string) string) ([]joiner.Option, error) {
	set := joiner.DefaultSettings()
	var opts []joiner.Option
	dur := func(name string, apply func(time.Duration)) error {
		if v := getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("invalid %s=%q: want a positive duration", name, v)
			}
			apply(d)
		}
		return nil
	}
	num := func(name string, apply func(uint64)) error {
		if v := getenv(name); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return fmt.Errorf("invalid %s=%q: want a non-negative integer", name, v)
			}
			apply(n)
		}
		return nil
	}
	for _, err := range []error{
		dur("ASYNCWEBRL_JOINER_LATE_WINDOW", func(d time.Duration) { set.Window = d }),
		num("ASYNCWEBRL_JOINER_MAX_STALENESS", func(n uint64) { set.MaxStaleness = n }),
		num("ASYNCWEBRL_JOINER_MAX_BATCH", func(n uint64) { opts = append(opts, joiner.WithMaxBatch(int(min(n, 1<<20)))) }),
		dur("ASYNCWEBRL_JOINER_SESSION_TIMEOUT", func(d time.Duration) { opts = append(opts, joiner.WithSessionTimeout(d)) }),
		dur("ASYNCWEBRL_JOINER_TRANSACTION_TIMEOUT", func(d time.Duration) { opts = append(opts, joiner.WithTransactionTimeout(d)) }),
		dur("ASYNCWEBRL_JOINER_STALL_TIMEOUT", func(d time.Duration) { opts = append(opts, joiner.WithStallTimeout(d)) }),
	} {
		if err != nil {
			return nil, err
		}
	}
	return append(opts, joiner.WithSettings(set)), nil
}
