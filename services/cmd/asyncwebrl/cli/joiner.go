package cli

import (
	"os"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
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
	opts, err := cmdkit.JoinerOptions(os.Getenv)
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	opts = append(opts,
		joiner.WithLogger(d.log.With("service", "joiner")),
		joiner.WithMetrics(d.metrics),
		joiner.WithInstanceID(d.cfg.InstanceID),
	)
	return joiner.New(d.cfg, d.kafka, d.catalog, opts...)
}
