package cli

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/dashboard"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/recorder"
)

// newRecorder builds the recorder target: group <topic prefix>recorder,
// writing into -clickhouse-database (migrated at start). Until they become
// flags, three knobs are read from the environment:
//
//	ASYNCWEBRL_RECORDER_SESSION_TIMEOUT  group session timeout (franz-go's 45s)
//	ASYNCWEBRL_RECORDER_BATCH            records per batch (50000)
//	ASYNCWEBRL_RECORDER_LINGER           longest wait of a batch that is not full (5s)
func newRecorder(d deps) (app.Service, error) {
	opts, err := recorderOptions(os.Getenv)
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	opts = append(opts,
		recorder.WithLogger(d.log.With("service", "recorder")),
		recorder.WithRegisterer(d.metrics),
		recorder.WithInstance(d.cfg.InstanceID),
		recorder.WithFrameSample(d.cfg.RecorderFrameSample),
	)
	return recorder.New(d.catalog, cmdkit.ClickHouse(d.cfg),
		func(o ...kgo.Opt) (*kgo.Client, error) { return d.kafka.NewClient("recorder", o...) }, opts...)
}

// newDashboard builds the dashboard target on -dashboard-addr.
func newDashboard(d deps) (app.Service, error) {
	return dashboard.New(d.cfg.DashboardAddr, cmdkit.ClickHouse(d.cfg),
		dashboard.WithLogger(d.log.With("service", "dashboard"))), nil
}

// recorderOptions reads the recorder's environment knobs through getenv.
func recorderOptions(getenv func(string) string) ([]recorder.Option, error) {
	var opts []recorder.Option
	if v := getenv("ASYNCWEBRL_RECORDER_SESSION_TIMEOUT"); v != "" {
		t, err := time.ParseDuration(v)
		if err != nil || t <= 0 {
			return nil, fmt.Errorf("invalid ASYNCWEBRL_RECORDER_SESSION_TIMEOUT=%q: want a positive duration", v)
		}
		opts = append(opts, recorder.WithSessionTimeout(t))
	}
	if v := getenv("ASYNCWEBRL_RECORDER_BATCH"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("invalid ASYNCWEBRL_RECORDER_BATCH=%q: want a positive integer", v)
		}
		opts = append(opts, recorder.WithBatchRecords(n))
	}
	if v := getenv("ASYNCWEBRL_RECORDER_LINGER"); v != "" {
		t, err := time.ParseDuration(v)
		if err != nil || t <= 0 {
			return nil, fmt.Errorf("invalid ASYNCWEBRL_RECORDER_LINGER=%q: want a positive duration", v)
		}
		opts = append(opts, recorder.WithLinger(t))
	}
	return opts, nil
}
