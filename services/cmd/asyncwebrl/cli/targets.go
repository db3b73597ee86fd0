package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/admin"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
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
	log := newLogger(cfg, stderr)
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
	catalog := catalogOf(cfg, cfg.TopicPrefix)
	if cfg.ApplyTopics {
		if err := applyTopics(ctx, factory, catalog, log); err != nil {
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
	services := []app.Service{admin.New(cfg.AdminAddr, reg, healthWithBrokers(runner.Healthy), log.With("service", "admin"))}
	for _, name := range cfg.Targets {
		svc, err := constructors[name](d)
		if err != nil {
			return fmt.Errorf("unable to build target %s: %w", name, err)
		}
		services = append(services, svc)
	}
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
	return errors.Join(runErr, shutdown(runner, cfg.StopTimeout, log))
}

// shutdown stops everything in reverse order under the deadline. When the
// deadline passes it dumps goroutine stacks to stderr (what was stuck is
// what an operator needs to see) and reports failure.
func shutdown(runner *app.Runner, timeout time.Duration, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runner.Stop(ctx) }()
	select {
	case err := <-done:
		if err == nil {
			log.Info("stopped cleanly")
		}
		return err
	case <-ctx.Done():
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
		return fmt.Errorf("unable to stop within %s: goroutine stacks dumped above", timeout)
	}
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

func applyTopics(ctx context.Context, f *kafka.Factory, c *topics.Catalog, log *slog.Logger) error {
	cl, err := f.NewClient("topics")
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	changes, err := topics.Apply(ctx, cl, c)
	if err != nil {
		return err
	}
	for _, ch := range changes {
		log.Info("topic changed", "topic", ch.Topic, "action", ch.Action, "detail", ch.Detail)
	}
	return nil
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
