package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

type fakeService struct {
	name     string
	log      *[]string
	mu       *sync.Mutex
	startErr error
	stopErr  error
	health   error
	block    chan struct{} // Start waits on it when set
}

func (f *fakeService) Name() string { return f.name }
func (f *fakeService) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	*f.log = append(*f.log, s)
}
func (f *fakeService) Start(ctx context.Context) error {
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.record("start " + f.name)
	return f.startErr
}
func (f *fakeService) Stop(context.Context) error {
	f.record("stop " + f.name)
	return f.stopErr
}
func (f *fakeService) Healthy(context.Context) error { return f.health }

func newFakes(names ...string) ([]Service, *[]string) {
	var log []string
	mu := &sync.Mutex{}
	var out []Service
	for _, n := range names {
		out = append(out, &fakeService{name: n, log: &log, mu: mu})
	}
	return out, &log
}

func TestRunnerStopsInReverse(t *testing.T) {
	svcs, log := newFakes("a", "b", "c")
	svcs[1].(*fakeService).stopErr = errors.New("b is stuck")
	r := NewRunner(slog.New(slog.DiscardHandler))
	if err := r.Healthy(context.Background()); err == nil {
		t.Fatal("healthy before start")
	}
	if err := r.Start(context.Background(), svcs, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.Healthy(context.Background()); err != nil {
		t.Fatal(err)
	}
	svcs[2].(*fakeService).health = errors.New("lagging")
	if err := r.Healthy(context.Background()); err == nil || !strings.Contains(err.Error(), "c: lagging") {
		t.Fatalf("Healthy = %v", err)
	}
	err := r.Stop(context.Background())
	if err == nil || !strings.Contains(err.Error(), "unable to stop b: b is stuck") {
		t.Fatalf("Stop err = %v", err)
	}
	want := "start a,start b,start c,stop c,stop b,stop a"
	if got := strings.Join(*log, ","); got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
}

func TestRunnerFailedStartStopsWhatStarted(t *testing.T) {
	svcs, log := newFakes("a", "b", "c")
	svcs[1].(*fakeService).startErr = errors.New("port in use")
	r := NewRunner(slog.New(slog.DiscardHandler))
	err := r.Start(context.Background(), svcs, time.Second)
	if err == nil || !strings.Contains(err.Error(), "unable to start b: port in use") {
		t.Fatalf("Start err = %v", err)
	}
	// b's Start ran (and failed), so b is not stopped; a is.
	want := "start a,start b,stop a"
	if got := strings.Join(*log, ","); got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
}

// A service still starting keeps the process unhealthy, so nothing treats a
// half-started stack as up.
func TestRunnerNotHealthyWhileStarting(t *testing.T) {
	svcs, _ := newFakes("a", "b")
	svcs[1].(*fakeService).block = make(chan struct{})
	r := NewRunner(slog.New(slog.DiscardHandler))
	done := make(chan error, 1)
	go func() { done <- r.Start(context.Background(), svcs, time.Second) }()
	for {
		r.mu.Lock()
		n := len(r.started)
		r.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := r.Healthy(context.Background()); err == nil || err.Error() != "starting" {
		t.Fatalf("Healthy while starting = %v", err)
	}
	close(svcs[1].(*fakeService).block)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := r.Healthy(context.Background()); err != nil {
		t.Fatal(err)
	}
}

type failing struct {
	fakeService
	ch chan error
}

func (f *failing) Failed() <-chan error { return f.ch }

func TestRunnerFailed(t *testing.T) {
	svcs, log := newFakes("a")
	f := &failing{fakeService: fakeService{name: "f", log: log, mu: &sync.Mutex{}}, ch: make(chan error, 1)}
	r := NewRunner(slog.New(slog.DiscardHandler))
	if err := r.Start(context.Background(), append(svcs, f), time.Second); err != nil {
		t.Fatal(err)
	}
	failed := r.Failed()
	f.ch <- errors.New("browser pool exhausted")
	err := <-failed
	if err == nil || !strings.Contains(err.Error(), "f failed: browser pool exhausted") {
		t.Fatalf("Failed = %v", err)
	}
}
