package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestRetryable(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"canceled", context.Canceled, false},
		{"closed", kgo.ErrClientClosed, false},
		{"too large", kerr.MessageTooLarge, false},
		{"fenced", fmt.Errorf("unable to commit: %w", kerr.ProducerFenced), false},
		{"auth", kerr.SaslAuthenticationFailed, false},
		{"leader moved", kerr.NotLeaderForPartition, true},
		{"coordinator loading", kerr.CoordinatorLoadInProgress, true},
		{"unknown topic", kerr.UnknownTopicOrPartition, true},
		{"record timeout", kgo.ErrRecordTimeout, true},
		{"net", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"plain", errors.New("boom"), false},
	}
	for _, c := range cases {
		if got := Retryable(c.err); got != c.want {
			t.Errorf("%s: Retryable(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

func TestRecordErrorCarriesCoordinates(t *testing.T) {
	base := errors.New("bad bytes")
	err := fmt.Errorf("unable to decode: %w", NewRecordError(&kgo.Record{Topic: "obs", Partition: 3, Offset: 42}, base))
	var re *RecordError
	if !errors.As(err, &re) {
		t.Fatal("RecordError not found in chain")
	}
	if re.Topic != "obs" || re.Partition != 3 || re.Offset != 42 {
		t.Fatalf("coordinates = %s[%d]@%d", re.Topic, re.Partition, re.Offset)
	}
	if !errors.Is(err, base) {
		t.Fatal("cause lost")
	}
	if got, want := re.Error(), "obs[3]@42: bad bytes"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}
