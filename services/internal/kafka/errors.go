package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// RecordError is an error about one consumed record. It carries where the
// record lives so that logs and dead letters point at it exactly.
type RecordError struct {
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

// NewRecordError wraps err with r's coordinates.
func NewRecordError(r *kgo.Record, err error) *RecordError {
	return &RecordError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Err: err}
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%s[%d]@%d: %v", e.Topic, e.Partition, e.Offset, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Retryable decides, for every client of this project, whether an operation
// that failed with err may be tried again unchanged.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	switch {
	// The caller gave up; retrying would ignore its decision.
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	// The client is closed: nothing will ever succeed on it.
	case errors.Is(err, kgo.ErrClientClosed):
		return false
	// A record too large for the topic will be too large next time too.
	case errors.Is(err, kerr.MessageTooLarge):
		return false
	// A fenced transactional producer must be rebuilt, not retried.
	case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch):
		return false
	// Authentication and authorization problems are configuration problems.
	case errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.TopicAuthorizationFailed),
		errors.Is(err, kerr.GroupAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed):
		return false
	}
	// Kafka itself says which of its errors are retriable (leader moves,
	// coordinator loads, not enough replicas, request timeouts).
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable
	}
	// Record timeouts and network errors are transient by nature: the broker
	// may be restarting.
	if errors.Is(err, kgo.ErrRecordTimeout) || errors.Is(err, kgo.ErrRecordRetries) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}
