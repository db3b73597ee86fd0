package recorderload

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/topics"
)

// CreateTopics applies catalog (its own prefix) on the cluster cl reaches.
func CreateTopics(ctx context.Context, cl *kgo.Client, catalog *topics.Catalog) error {
	_, err := topics.Apply(ctx, cl, catalog)
	return err
}

// DeleteTopics deletes the catalog's topics (a benchmark's scratch topics).
func DeleteTopics(ctx context.Context, cl *kgo.Client, catalog *topics.Catalog) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).DeleteTopics(ctx, catalog.Names()...)
	if err != nil {
		return fmt.Errorf("unable to delete topics: %w", err)
	}
	return resp.Error()
}
