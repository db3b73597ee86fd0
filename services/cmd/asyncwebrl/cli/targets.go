package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/admin"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/cpuset"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/profiling"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// deps is what every target constructor is built from.
type deps struct {
	cfg     *config.Config
	log     *slog.Logger
	metrics *prometheus.Registry
	kafka   *kafka.Factory
	catalog *topics.Catalog
}

// constructors maps each target to the one constructor that builds it.
// Order of start is config.KnownTargets'.
var constructors = map[string]func(d deps) (app.Service, error){
	"webenv":    newWebenv,
	"actor":     newActor,
	"joiner":    newJoiner,
	"learner":   newLearner,
	"recorder":  newRecorder,
	"dashboard": newDashboard,
	"reporter":  newReporter,
}

func runTargets(ctx context.Context, cfg *config.Config, stderr io.Writer) error {
	log := cmdkit.NewLogger(cfg, stderr)
	log.Info("starting asyncwebrl", "version", Version, "config", cfg)

	ctx, stopSignals := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stopSignals()

	stopProfiling, err := profiling.Start(cfg.Pyroscope, cfg.InstanceID, cfg.Targets, log)
	if err != nil {
		return err
	}
	defer func() { _ = stopProfiling() }() // observability closes last

	factory, closeKafka, err := kafka.Connect(cfg, log)
	if err != nil {
		return err
	}
	defer closeKafka()
	if cfg.Embedded() {
		log.Warn("using the embedded in-process Kafka (kfake): data is lost on exit; for development only", "addrs", factory.Seeds())
	}
	if err := factory.Ping(ctx, 10*time.Second); err != nil {
		return err
	}
	catalog := cmdkit.Catalog(cfg, cfg.TopicPrefix)
	if cfg.ApplyTopics {
		if err := cmdkit.ApplyTopics(ctx, factory, catalog, log); err != nil {
			return err
		}
	}

	reg := admin.NewRegistry()
	// Client metrics of every client the services build from here on, and
	// the lag of this process's consumer groups, on /metrics.
	factory.Instrument(reg)
	if groups := consumerGroups(cfg.Targets, catalog); len(groups) > 0 {
		lc := kafka.NewLagCollector(func(o ...kgo.Opt) (*kgo.Client, error) { return factory.NewClient("lag-metrics", o...) }, log, groups...)
		defer lc.Close()
		reg.MustRegister(lc)
	}
	d := deps{cfg: cfg, log: log, metrics: reg, kafka: factory, catalog: catalog}
	runner := app.NewRunner(log)
	targets, err := d.build(cfg.Targets)
	if err != nil {
		return err
	}
	services := append([]app.Service{admin.New(cfg.AdminAddr, reg, healthWithBrokers(runner.Healthy), log.With("service", "admin"))}, targets...)
	if err := runner.Start(ctx, services, cfg.StopTimeout); err != nil {
		if ctx.Err() != nil {
			// A signal during start-up: what had started is stopped; that
			// is the shutdown the user asked for, not a failure.
			log.Info("signal received during start-up; stopped")
			return nil
		}
		return err
	}
	log.Info("running", "targets", cfg.Targets, "admin", cfg.AdminAddr)

	var runErr error
	var deadline <-chan time.Time
	if cfg.Run.Duration > 0 {
		t := time.NewTimer(cfg.Run.Duration)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-ctx.Done():
		log.Info("signal received, shutting down", "deadline", cfg.StopTimeout)
	case <-deadline:
		log.Info("run duration reached, shutting down", "duration", cfg.Run.Duration, "deadline", cfg.StopTimeout)
	case runErr = <-runner.Failed():
		log.Error("a service failed, shutting down", "err", runErr)
	}
	return errors.Join(runErr, cmdkit.Shutdown(runner, cfg.StopTimeout, log))
}

// buildTargets builds the named targets on cfg as runTargets does, with a
// metrics registry of their own: bench train's pipeline (bench.Pipeline).
func buildTargets(cfg *config.Config, names []string, log *slog.Logger, f *kafka.Factory, cat *topics.Catalog) ([]app.Service, error) {
	d := deps{cfg: cfg, log: log, metrics: admin.NewRegistry(), kafka: f, catalog: cat}
	return d.build(names)
}

// build constructs the named targets, after reserving the learner's core
// when -learner-core asks for one: make run, -target and bench train alike
// (until 12-07 only bench train reserved it, so under make run the
// learner's pinned thread shared its core with every other thread).
func (d deps) build(names []string) ([]app.Service, error) {
	if c := d.cfg.Learner.Core; c >= 0 {
		// Before the browsers start: they inherit the set. The learner's
		// thread takes the core back (learner.WithTrainCore).
		if err := cpuset.Reserve(c); err != nil {
			return nil, err
		}
		d.log.Info("core reserved for the learner's training thread", "core", c)
	}
	var services []app.Service
	for _, name := range names {
		svc, err := constructors[name](d)
		if err != nil {
			return nil, fmt.Errorf("unable to build target %s: %w", name, err)
		}
		services = append(services, svc)
	}
	return services, nil
}

// brokerGrace: a broker is reported down after this long without an answer,
// so a connection that is merely re-dialled is not an outage.
const brokerGrace = 3 * time.Second

// healthWithBrokers adds the process's broker reachability to the services'
// health: while a broker is away the process is degraded (it reconnects by
// itself), not unhealthy, unless a service says it is.
func healthWithBrokers(services admin.HealthFunc) admin.HealthFunc {
	return func(ctx context.Context) error {
		err := services(ctx)
		if err != nil && !app.IsDegraded(err) {
			return err
		}
		if down := kafka.Reach.Down(brokerGrace); down != "" {
			return app.Degraded(errors.Join(errors.New(down), err))
		}
		return err
	}
}

// consumerGroups are the consumer groups the targets join (each service
// names its group after the catalog's prefix).
func consumerGroups(targets []string, cat *topics.Catalog) []string {
	var out []string
	for _, t := range targets {
		switch t {
		case "actor", "joiner", "learner", "recorder":
			out = append(out, cat.Prefix+t)
		}
	}
	return out
}
