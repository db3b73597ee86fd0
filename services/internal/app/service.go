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

// Producer is implemented by services that write events other services
// consume (the actors' events, the curriculum's tasks). On stop the runner
// calls StopProducing on every one of them before anything drains, so that
// the drains have a fixed end to reach.
//
// StopProducing stops taking new work, ends or records as aborted the work
// in flight, and flushes what was produced, by the context's deadline. The
// service keeps its other resources (and keeps consuming, if it does) until
// Stop, which must still work afterwards.
type Producer interface {
	StopProducing(ctx context.Context) error
}

// Drainer is implemented by consumers whose output must be complete after a
// clean stop (the joiner, the recorder). Once the producers have stopped, the
// runner calls Drain on each in start order, so a consumer drains after what
// it reads from.
//
// Drain returns when the service has consumed and committed its inputs up to
// their end offsets, or with an error (how far behind it was left) when the
// context ends first. A drain that fails does not fail the stop: Stop
// follows either way, and what was not drained is redelivered to the next
// run through the uncommitted offsets.
type Drainer interface {
	Drain(ctx context.Context) error
}
