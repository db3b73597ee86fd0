package actor

import (
	"sync"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// phase is where an executor's time goes.
type phase int

const (
	// phObserve: turning the page into an observation event (screenshot
	// decode, frame encoding, frame store, elements) and reading it back.
	phObserve phase = iota
	// phThink: featurizing, inference (including the wait for a batch) and
	// sampling.
	phThink
	// phAct: dispatching the action to the page (or opening a task page).
	phAct
	// phWait: waiting for the own page to settle.
	phWait
	// phIdle: nothing to do: no task yet, or a sync barrier waiting for the
	// other executors.
	phIdle
	numPhases
)

// TimeSplit is time per phase, summed over executors.
type TimeSplit struct {
	Observe, Think, Act, Wait, Idle time.Duration
}

// Total is the sum of the phases.
func (t TimeSplit) Total() time.Duration { return t.Observe + t.Think + t.Act + t.Wait + t.Idle }

// timeSplit accumulates one executor's phases for the current telemetry
// window and since the start.
type timeSplit struct {
	mu              sync.Mutex
	windowStart     time.Time
	win, total      [numPhases]time.Duration
	steps, episodes uint32
}

func newTimeSplit() *timeSplit { return &timeSplit{windowStart: time.Now()} }

func (t *timeSplit) add(p phase, d time.Duration) {
	if d < 0 {
		d = 0
	}
	t.mu.Lock()
	t.win[p] += d
	t.total[p] += d
	t.mu.Unlock()
}

// since adds the time since start to p and returns now, to chain phases.
func (t *timeSplit) since(p phase, start time.Time) time.Time {
	now := time.Now()
	t.add(p, now.Sub(start))
	return now
}

func (t *timeSplit) count(steps, episodes uint32) {
	t.mu.Lock()
	t.steps += steps
	t.episodes += episodes
	t.mu.Unlock()
}

// window returns the current window as a Telemetry event and starts a new
// one.
func (t *timeSplit) window(producer, actorID, executorID string, mode Mode) *eventspb.Telemetry {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	us := func(p phase) uint64 { return uint64(t.win[p].Microseconds()) }
	ev := &eventspb.Telemetry{
		Envelope:            eventspb.NewEnvelope(producer),
		ActorId:             actorID,
		ExecutorId:          executorID,
		Mode:                string(mode),
		WindowStartUnixNano: t.windowStart.UnixNano(),
		WindowEndUnixNano:   now.UnixNano(),
		ObserveUs:           us(phObserve),
		ThinkUs:             us(phThink),
		ActUs:               us(phAct),
		WaitUs:              us(phWait),
		IdleUs:              us(phIdle),
		Steps:               t.steps,
		Episodes:            t.episodes,
	}
	t.win = [numPhases]time.Duration{}
	t.steps, t.episodes = 0, 0
	t.windowStart = now
	return ev
}

func (t *timeSplit) totals() TimeSplit {
	t.mu.Lock()
	defer t.mu.Unlock()
	return TimeSplit{Observe: t.total[phObserve], Think: t.total[phThink], Act: t.total[phAct], Wait: t.total[phWait], Idle: t.total[phIdle]}
}
