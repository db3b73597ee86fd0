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

// producer and drainer are fakes of the optional stop phases.
type producer struct {
	fakeService
	err error
}

func (p *producer) StopProducing(context.Context) error {
	p.record("produce-stop " + p.name)
	return p.err
}

type drainer struct {
	fakeService
	err   error
	block bool // Drain waits for its context to end
	stop  error
}

func (d *drainer) Drain(ctx context.Context) error {
	d.record("drain " + d.name)
	if d.block {
		<-ctx.Done()
		return ctx.Err()
	}
	return d.err
}

func (d *drainer) Stop(ctx context.Context) error {
	d.stop = ctx.Err() // the context a Stop after a drain that timed out gets
	return d.fakeService.Stop(ctx)
}

// The order a stop of `-target=all` relies on: every producer ends (the
// curriculum before the actors, reverse start order), then the joiner drains
// and then the recorder (start order), then everything stops in reverse.
func TestRunnerStopPhases(t *testing.T) {
	var log []string
	mu := &sync.Mutex{}
	fake := func(n string) fakeService { return fakeService{name: n, log: &log, mu: mu} }
	svcs := []Service{
		&fakeService{name: "webenv", log: &log, mu: mu},
		&producer{fakeService: fake("actor")},
		&drainer{fakeService: fake("joiner")},
		&producer{fakeService: fake("learner")},
		&drainer{fakeService: fake("recorder")},
		&fakeService{name: "dashboard", log: &log, mu: mu},
	}
	r := NewRunner(slog.New(slog.DiscardHandler))
	if err := r.Start(context.Background(), svcs, time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	want := "start webenv,start actor,start joiner,start learner,start recorder,start dashboard," +
		"produce-stop learner,produce-stop actor," +
		"drain joiner,drain recorder," +
		"stop dashboard,stop recorder,stop learner,stop joiner,stop actor,stop webenv"
	if got := strings.Join(log, ","); got != want {
		t.Fatalf("order\n%s\nwant\n%s", got, want)
	}
}

// A drain that cannot finish is logged, not an error, and it ends early
// enough that the Stops still run inside the deadline; a producer that
// fails to stop producing is an error, and the stop goes on.
func TestRunnerDrainTimeoutStillStops(t *testing.T) {
	var log []string
	mu := &sync.Mutex{}
	fake := func(n string) fakeService { return fakeService{name: n, log: &log, mu: mu} }
	p := &producer{fakeService: fake("actor"), err: errors.New("flush failed")}
	stuck := &drainer{fakeService: fake("joiner"), block: true}
	late := &drainer{fakeService: fake("recorder"), err: errors.New("3 records behind")}
	r := NewRunner(slog.New(slog.DiscardHandler))
	if err := r.Start(context.Background(), []Service{p, stuck, late}, time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err := r.Stop(ctx)
	if err == nil || !strings.Contains(err.Error(), "unable to stop actor producing: flush failed") {
		t.Fatalf("Stop err = %v", err)
	}
	if strings.Contains(err.Error(), "behind") || strings.Contains(err.Error(), "deadline") {
		t.Fatalf("a drain that did not finish failed the stop: %v", err)
	}
	if took := time.Since(t0); took > 1400*time.Millisecond {
		t.Fatalf("stop took %s: the drain used the whole deadline", took)
	}
	if stuck.stop != nil || late.stop != nil {
		t.Fatalf("Stop called with an ended context (%v, %v)", stuck.stop, late.stop)
	}
	want := "start actor,start joiner,start recorder,produce-stop actor,drain joiner,drain recorder,stop recorder,stop joiner,stop actor"
	if got := strings.Join(log, ","); got != want {
		t.Fatalf("order\n%s\nwant\n%s", got, want)
	}
}

// A start that fails stops what started without ending producers or
// draining: there is no run to complete.
func TestRunnerFailedStartDoesNotDrain(t *testing.T) {
	var log []string
	mu := &sync.Mutex{}
	fake := func(n string) fakeService { return fakeService{name: n, log: &log, mu: mu} }
	bad := fake("recorder")
	bad.startErr = errors.New("port in use")
	r := NewRunner(slog.New(slog.DiscardHandler))
	err := r.Start(context.Background(), []Service{&producer{fakeService: fake("actor")}, &drainer{fakeService: fake("joiner")}, &bad}, time.Second)
	if err == nil {
		t.Fatal("start succeeded")
	}
	want := "start actor,start joiner,start recorder,stop joiner,stop actor"
	if got := strings.Join(log, ","); got != want {
		t.Fatalf("order\n%s\nwant\n%s", got, want)
	}
}

// healthSvc is a service whose health is err.
type healthSvc struct {
	name string
	err  error
}

func (h healthSvc) Name() string                  { return h.name }
func (h healthSvc) Start(context.Context) error   { return nil }
func (h healthSvc) Stop(context.Context) error    { return nil }
func (h healthSvc) Healthy(context.Context) error { return h.err }

func TestHealthyFailureWinsOverDegradation(t *testing.T) {
	ctx := context.Background()
	run := func(svcs ...Service) error {
		r := NewRunner(slog.New(slog.DiscardHandler))
		if err := r.Start(ctx, svcs, time.Second); err != nil {
			t.Fatal(err)
		}
		return r.Healthy(ctx)
	}
	away := healthSvc{"joiner", Degraded(errors.New("session lost 3s ago"))}
	broken := healthSvc{"recorder", errors.New("ClickHouse refused the schema")}
	ok := healthSvc{name: "actor"}

	if err := run(ok); err != nil {
		t.Fatalf("healthy services: %v", err)
	}
	err := run(ok, away)
	if !IsDegraded(err) || !strings.Contains(err.Error(), "joiner: session lost") {
		t.Fatalf("a degraded service: %v, want degraded naming it", err)
	}
	err = run(away, broken)
	if err == nil || IsDegraded(err) || !strings.Contains(err.Error(), "recorder: ClickHouse refused") {
		t.Fatalf("a failed service behind a degraded one: %v, want the failure", err)
	}
}
