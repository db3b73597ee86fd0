package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
)

// pendingTarget is a target whose capability has not landed yet (its issue
// number says which). It runs as a healthy member of the stack: it holds a
// Kafka client and reports unhealthy when the broker is unreachable, so that
// `-target=all` and compose.yaml work end to end while the real component is
// being built. It produces and consumes nothing.
func pendingTarget(name string, issue int) func(d deps) (app.Service, error) {
	return func(d deps) (app.Service, error) {
		return &pending{name: name, issue: issue, d: d}, nil
	}
}

type pending struct {
	name  string
	issue int
	d     deps
	cl    *kgo.Client
}

func (p *pending) Name() string { return p.name }

func (p *pending) Start(ctx context.Context) error {
	cl, err := p.d.kafka.NewClient(p.name)
	if err != nil {
		return err
	}
	p.cl = cl
	p.d.log.Warn("target not implemented yet; idling with a healthy Kafka connection", "target", p.name, "issue", p.issue)
	return nil
}

func (p *pending) Healthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := p.cl.Ping(ctx); err != nil {
		return fmt.Errorf("unable to reach Kafka: %w", err)
	}
	return nil
}

func (p *pending) Stop(context.Context) error {
	if p.cl != nil {
		p.cl.Close()
	}
	return nil
}
