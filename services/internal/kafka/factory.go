package kafka

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
)

// Factory builds the Kafka clients of one process, all with the same seeds,
// security and logging. Components own the clients they make and close them.
type Factory struct {
	cfg   *config.Config
	seeds []string
	log   *slog.Logger
}

// NewFactory returns a factory for seeds (the configured brokers, or the
// embedded cluster's addresses).
func NewFactory(cfg *config.Config, seeds []string, log *slog.Logger) *Factory {
	return &Factory{cfg: cfg, seeds: seeds, log: log}
}

// Seeds returns the brokers clients connect to.
func (f *Factory) Seeds() []string { return f.seeds }

// NewClient returns a client named instance/name with extra options
// appended (consumer group, transactional id, producer tuning).
func (f *Factory) NewClient(name string, extra ...kgo.Opt) (*kgo.Client, error) {
	opts, err := Opts(f.cfg, f.seeds, f.cfg.InstanceID+"/"+name, f.log)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("unable to create Kafka client %s: %w", name, err)
	}
	return cl, nil
}

// Ping makes a short-lived client without logging (so a dead broker gives
// one error line, not a stream of retry warnings) and pings the cluster.
func (f *Factory) Ping(ctx context.Context, timeout time.Duration) error {
	opts, err := Opts(f.cfg, f.seeds, f.cfg.InstanceID+"/ping", nil)
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("unable to create Kafka client: %w", err)
	}
	defer cl.Close()
	return Ping(ctx, cl, f.seeds, timeout)
}
