package kafka

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestReachabilityDownAndBack(t *testing.T) {
	now := time.Unix(1000, 0)
	r := NewReachability()
	r.now = func() time.Time { return now }
	b1 := kgo.BrokerMetadata{NodeID: 1, Host: "127.0.0.1", Port: 19092}
	b2 := kgo.BrokerMetadata{NodeID: 2, Host: "127.0.0.1", Port: 19094}
	refused := errors.New("connect: connection refused")

	r.OnBrokerConnect(b1, 0, nil, nil)
	if got := r.Down(0); got != "" {
		t.Fatalf("a broker that answered is down: %q", got)
	}
	r.OnBrokerConnect(b1, 0, nil, refused)
	if got := r.Down(3 * time.Second); got != "" {
		t.Fatalf("down within the grace: %q", got)
	}
	now = now.Add(5 * time.Second)
	r.OnBrokerE2E(b1, 0, kgo.BrokerE2E{ReadErr: refused})
	r.OnBrokerE2E(b2, 0, kgo.BrokerE2E{})
	got := r.Down(3 * time.Second)
	if !strings.Contains(got, "127.0.0.1:19092 unreachable for 5s") || !strings.Contains(got, "connection refused") || strings.Contains(got, "19094") {
		t.Fatalf("want broker 1 down for 5s, broker 2 up: %q", got)
	}
	// One success ends the outage.
	r.OnBrokerE2E(b1, 0, kgo.BrokerE2E{})
	if got := r.Down(0); got != "" {
		t.Fatalf("a broker that answered again is still down: %q", got)
	}
	// A broker the clients stopped trying (gone from the metadata) is
	// forgotten.
	r.OnBrokerConnect(b2, 0, nil, refused)
	now = now.Add(forgetAfter + time.Second)
	if got := r.Down(0); got != "" {
		t.Fatalf("a broker nobody tries any more is still reported: %q", got)
	}
}
