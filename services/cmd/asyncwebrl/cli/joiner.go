package cli

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
)

// newJoiner builds the joiner target. Its join knobs are read from
// ASYNCWEBRL_JOINER_* variables until they become flags of config.Config:
//
//	ASYNCWEBRL_JOINER_LATE_WINDOW          late window W (30s)
//	ASYNCWEBRL_JOINER_MAX_STALENESS        staleness bound K in policy versions (0: off)
//	ASYNCWEBRL_JOINER_MAX_BATCH            records per transaction (10000)
//	ASYNCWEBRL_JOINER_SESSION_TIMEOUT      group session timeout (10s)
//	ASYNCWEBRL_JOINER_TRANSACTION_TIMEOUT  transaction timeout (15s)
//	ASYNCWEBRL_JOINER_STALL_TIMEOUT        no commit for this long while input waits rebuilds the Kafka session (60s)
func newJoiner(d deps) (app.Service, error) {
	opts, err := joinerOptions(os.Getenv)
	if err != nil {
		return nil, usageError{err}
	}
	opts = append(opts,
		joiner.WithLogger(d.log.With("service", "joiner")),
		joiner.WithMetrics(d.metrics),
		joiner.WithInstanceID(d.cfg.InstanceID),
	)
	return joiner.New(d.cfg, d.kafka, d.catalog, opts...)
}

func joinerOptions(getenv func(string) string) ([]joiner.Option, error) {
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
