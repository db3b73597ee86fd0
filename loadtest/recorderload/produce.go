package recorderload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Produce sends every event of g to the catalog's topics through cl and
// waits until all are acknowledged. cl should be an idempotent producer (the
// franz-go default) so that a retried batch is never written twice.
func Produce(ctx context.Context, cl *kgo.Client, catalog *topics.Catalog, g *Generator) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	done := func(_ *kgo.Record, err error) {
		defer wg.Done()
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}
	}
	for {
		ev, err := g.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Topic: catalog.Name(ev.Topic), Key: ev.Key, Value: ev.Value}, done)
	}
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("unable to produce synthetic events: %w", firstErr)
	}
	return nil
}
