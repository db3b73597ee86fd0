package prom

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestSetSharesAndFails: a second set of one subsystem on a registry reuses
// the first's collectors (two instances in one process count together); a
// name registered with another type is an error naming the subsystem; a
// nil registry keeps metrics private.
func TestSetSharesAndFails(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, b := New(reg, "thing"), New(reg, "thing")
	ca, cb := a.Counter("events_total", "Events."), b.Counter("events_total", "Events.")
	ca.Inc()
	cb.Inc()
	if got := testutil.ToFloat64(ca); got != 2 {
		t.Fatalf("shared counter = %v, want 2", got)
	}
	if a.Err() != nil || b.Err() != nil {
		t.Fatalf("errors %v, %v", a.Err(), b.Err())
	}
	c := New(reg, "thing")
	c.Gauge("events_total", "Events.")
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "unable to register thing metrics") {
		t.Fatalf("a gauge under a counter's name: err = %v", err)
	}
	p := New(nil, "thing")
	p.CounterVec("x_total", "X.", "k").WithLabelValues("v").Inc()
	p.Histogram("h", "H.", prometheus.LinearBuckets(1, 1, 3)).Observe(1)
	if p.Err() != nil {
		t.Fatal(p.Err())
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 1 {
		t.Fatalf("registry holds %d metrics (%v), want 1", n, err)
	}
}
