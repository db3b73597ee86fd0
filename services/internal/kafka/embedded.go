package kafka

import (
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
)

// Embedded is franz-go's in-process fake cluster. It supports consumer groups
// and transactions, which is enough for a zero-setup local run and for unit
// tests; it is never the only proof of a behaviour (integration tests run on
// the real broker).
type Embedded struct {
	c *kfake.Cluster
}

// StartEmbedded starts a single-node fake cluster on a random loopback port.
// Topics are created by the project's own admin code, as on a real cluster.
func StartEmbedded(opts ...kfake.Opt) (*Embedded, error) {
	opts = append([]kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation()}, opts...)
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("unable to start embedded Kafka: %w", err)
	}
	return &Embedded{c: c}, nil
}

// Seeds returns the fake cluster's listen addresses.
func (e *Embedded) Seeds() []string { return e.c.ListenAddrs() }

// Close stops the cluster; its data is gone.
func (e *Embedded) Close() { e.c.Close() }

// Connect returns the client factory for the brokers cfg names, or, when
// it names the embedded cluster (-brokers=embedded), for one it starts;
// closeFn stops that cluster (a no-op on a real one). Nothing is dialled
// yet: Ping checks the brokers answer.
func Connect(cfg *config.Config, log *slog.Logger) (f *Factory, closeFn func(), err error) {
	if !cfg.Embedded() {
		return NewFactory(cfg, cfg.Brokers, log), func() {}, nil
	}
	e, err := StartEmbedded()
	if err != nil {
		return nil, nil, err
	}
	return NewFactory(cfg, e.Seeds(), log), e.Close, nil
}
