package kafka

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"

	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
)

// Factory builds the Kafka clients of one process, all with the same seeds,
// security and logging. Components own the clients they make and close them.
type Factory struct {
	cfg   *config.Config
	seeds []string
	log   *slog.Logger

	// Instrument's: the registry client metrics go to, and the labels of
	// the live clients (kprom registers one set of metrics per client, and
	// a second live client under the same label would collide).
	mu     sync.Mutex
	reg    prometheus.Registerer
	labels map[string]bool
}

// NewFactory returns a factory for seeds (the configured brokers, or the
// embedded cluster's addresses).
func NewFactory(cfg *config.Config, seeds []string, log *slog.Logger) *Factory {
	return &Factory{cfg: cfg, seeds: seeds, log: log}
}

// Instrument makes every client built from now on report franz-go's client
// metrics (kprom: connections, bytes and records produced and fetched,
// request latency, per broker) to reg as asyncwebrl_kafka_*, labelled
// client="<instance>/<name>" (with "#2", "#3"... while another client of the
// same name is open). Call it once, before the services build their
// clients.
func (f *Factory) Instrument(reg prometheus.Registerer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reg, f.labels = reg, map[string]bool{}
}

// metricsHooks are a new client's kprom metrics and the hook that frees its
// label when it closes, and that release itself for a client that was never
// built; nil when the factory is not instrumented.
func (f *Factory) metricsHooks(id string) ([]kgo.Hook, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reg == nil {
		return nil, func() {}
	}
	label := id
	for n := 2; f.labels[label]; n++ {
		label = id + "#" + strconv.Itoa(n)
	}
	f.labels[label] = true
	release := func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.labels, label)
	}
	m := kprom.NewMetrics("asyncwebrl", kprom.Subsystem("kafka"), kprom.Registerer(f.reg), kprom.WithStaticLabel(prometheus.Labels{"client": label}))
	return []kgo.Hook{m, releaseLabel(release)}, release
}

// releaseLabel runs when its client closes (after kprom unregistered the
// client's metrics).
type releaseLabel func()

func (r releaseLabel) OnClientClosed(*kgo.Client) { r() }

// Seeds returns the brokers clients connect to.
func (f *Factory) Seeds() []string { return f.seeds }

// NewClient returns a client named instance/name with extra options
// appended (consumer group, transactional id, producer tuning).
func (f *Factory) NewClient(name string, extra ...kgo.Opt) (*kgo.Client, error) {
	opts, err := Opts(f.cfg, f.seeds, f.cfg.InstanceID+"/"+name, f.log)
	if err != nil {
		return nil, err
	}
	hooks, release := f.metricsHooks(f.cfg.InstanceID + "/" + name)
	if hooks != nil {
		opts = append(opts, kgo.WithHooks(hooks...))
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		release()
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
