package app

import "context"

// Service is one long-running component of the binary.
//
// Start returns once the service is ready to do its work (listeners bound,
// clients connected); the work itself continues in goroutines owned by the
// service. Start must not block for the life of the service.
//
// Stop stops consuming, drains in-flight work, commits what is durable and
// releases resources. It must return by the context's deadline; work not
// drained by then is abandoned and, for Kafka consumers, redelivered to the
// next member of the group because its offsets were never committed.
type Service interface {
	Name() string
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// HealthChecker is implemented by services that can report their health.
// The admin server's /healthz aggregates every running service that
// implements it; a service that does not is healthy while it runs.
type HealthChecker interface {
	Healthy(ctx context.Context) error
}

// Failer is implemented by services that can fail after Start returned
// (a consumer whose broker is gone for good, a browser pool that cannot
// restart). The runner stops the whole process when a Failed channel yields,
// so that a supervisor (systemd, Kubernetes) restarts it.
type Failer interface {
	Failed() <-chan error
}
