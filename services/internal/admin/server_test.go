package admin

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServerEndpoints(t *testing.T) {
	var healthErr error
	reg := NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "asyncwebrl_test_events_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)
	s := New("127.0.0.1:0", reg, func(context.Context) error { return healthErr }, slog.New(slog.DiscardHandler))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.Addr()

	if code, body := get(t, base+"/healthz"); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Fatalf("healthz = %d %s", code, body)
	}
	healthErr = errors.New("joiner: broker unreachable")
	if code, body := get(t, base+"/healthz"); code != 503 || !strings.Contains(body, "broker unreachable") {
		t.Fatalf("unhealthy healthz = %d %s", code, body)
	}
	// A degradation the process rides out: still 200, so no probe
	// restarts it, but the reason is there.
	healthErr = app.Degraded(errors.New("Kafka broker 127.0.0.1:19092 unreachable for 12s"))
	if code, body := get(t, base+"/healthz"); code != 200 || !strings.Contains(body, `"degraded"`) || !strings.Contains(body, "unreachable for 12s") {
		t.Fatalf("degraded healthz = %d %s", code, body)
	}
	if code, body := get(t, base+"/metrics"); code != 200 || !strings.Contains(body, "asyncwebrl_test_events_total 3") || !strings.Contains(body, "go_goroutines") || !strings.Contains(body, "go_gc_heap_live_bytes ") || !strings.Contains(body, "asyncwebrl_c_heap_in_use_bytes ") {
		t.Fatalf("metrics = %d %.200s", code, body)
	}
	if code, body := get(t, base+"/debug/pprof/"); code != 200 || !strings.Contains(body, "goroutine") {
		t.Fatalf("pprof = %d %.200s", code, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("server still answering after Stop")
	}
}

func TestStartPortInUse(t *testing.T) {
	a := New("127.0.0.1:0", NewRegistry(), func(context.Context) error { return nil }, slog.New(slog.DiscardHandler))
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	b := New(a.Addr(), NewRegistry(), func(context.Context) error { return nil }, slog.New(slog.DiscardHandler))
	err := b.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "unable to listen on admin address") {
		t.Fatalf("second Start err = %v", err)
	}
}
