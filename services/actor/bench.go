package actor

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/procstat"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// BenchConfig is one rollout benchmark run of one mode.
type BenchConfig struct {
	Config  *config.Config
	Factory *kafka.Factory
	Catalog *topics.Catalog
	// Warmup runs before the measured Duration (browsers launched, pages
	// cached, batch sizes settled).
	Warmup, Duration time.Duration
	// Options configure the actor (executors, browsers, webenv URL, ...);
	// the mode is set by BenchMode.
	Options []Option
}

// BenchRun is what one mode achieved over the measured window.
type BenchRun struct {
	Mode                Mode
	Executors, Browsers int
	Wall                time.Duration
	Steps               uint64
	Episodes            uint64 // ended, aborted included
	Aborted             uint64
	Unstable            uint64
	SelfCPU, BrowserCPU time.Duration
	Cores               int
	// Machine is the whole machine's busy CPU share over the window, the
	// broker and every other process included; 0 where it is not measured.
	Machine           float64
	Split             TimeSplit
	Batches, BatchSum uint64
}

// StepsPerSec is the executed actions per second.
func (r BenchRun) StepsPerSec() float64 { return float64(r.Steps) / r.Wall.Seconds() }

// TrajPerHour is the episodes that ended (not aborted) per hour.
func (r BenchRun) TrajPerHour() float64 {
	return float64(r.Episodes-min(r.Aborted, r.Episodes)) / r.Wall.Hours()
}

// CPUUtil is (actor process + its Chromium processes) CPU time over wall
// time and cores, in [0, 1].
func (r BenchRun) CPUUtil() float64 {
	return (r.SelfCPU + r.BrowserCPU).Seconds() / r.Wall.Seconds() / float64(max(r.Cores, 1))
}

// MeanBatch is the mean inference batch size an action ran in.
func (r BenchRun) MeanBatch() float64 {
	if r.Batches == 0 {
		return 0
	}
	return float64(r.BatchSum) / float64(r.Batches)
}

// IdleShare is the executors' idle time over their total time.
func (r BenchRun) IdleShare() float64 {
	if t := r.Split.Total(); t > 0 {
		return r.Split.Idle.Seconds() / t.Seconds()
	}
	return 0
}

// Ceiling is the async/this-mode steps/s ratio that executors which are
// never idle would reach at this run's busy time per step: 1/(1 - idle
// share). Against a lock-step baseline it bounds what overlapping page
// waits can win, unless the asynchronous steps themselves get faster than
// the baseline's (they are slower when they share the cores more). 0 when
// the run has no time split.
func (r BenchRun) Ceiling() float64 {
	if r.Split.Total() <= 0 || r.IdleShare() >= 1 {
		return 0
	}
	return 1 / (1 - r.IdleShare())
}

// BenchMode starts an actor in mode, lets it warm up, measures it for the
// duration and stops it.
func BenchMode(ctx context.Context, bc BenchConfig, mode Mode) (BenchRun, error) {
	opts := append(append([]Option(nil), bc.Options...), WithMode(mode))
	a, err := New(bc.Config, bc.Factory, bc.Catalog, opts...)
	if err != nil {
		return BenchRun{}, err
	}
	if err := a.Start(ctx); err != nil {
		return BenchRun{}, fmt.Errorf("unable to start the %s actor: %w", mode, err)
	}
	stop := func() error {
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return a.Stop(sctx)
	}
	if err := backoff.Sleep(ctx, bc.Warmup); err != nil {
		_ = stop()
		return BenchRun{}, err
	}
	s0, split0 := a.Stats(), a.TimeSplit()
	self0, browser0, t0, m0 := selfCPU(), a.BrowserCPU(), time.Now(), procstat.Machine()
	if err := backoff.Sleep(ctx, bc.Duration); err != nil {
		_ = stop()
		return BenchRun{}, err
	}
	s1, split1 := a.Stats(), a.TimeSplit()
	self1, browser1, wall, m1 := selfCPU(), a.BrowserCPU(), time.Since(t0), procstat.Machine()
	run := BenchRun{
		Mode: mode, Executors: a.opts.executors, Browsers: a.opts.browsers, Wall: wall,
		Steps: s1.Steps - s0.Steps, Episodes: s1.Episodes - s0.Episodes, Aborted: s1.Aborted - s0.Aborted,
		Unstable: s1.Unstable - s0.Unstable,
		SelfCPU:  self1 - self0, BrowserCPU: max(browser1-browser0, 0), Cores: runtime.NumCPU(),
		Machine: procstat.Util(m0, m1),
		Split: TimeSplit{
			Observe: split1.Observe - split0.Observe, Think: split1.Think - split0.Think, Act: split1.Act - split0.Act,
			Wait: split1.Wait - split0.Wait, Idle: split1.Idle - split0.Idle,
		},
		Batches: s1.Batches - s0.Batches, BatchSum: s1.BatchSizeSum - s0.BatchSizeSum,
	}
	if err := stop(); err != nil {
		return run, fmt.Errorf("unable to stop the %s actor: %w", mode, err)
	}
	return run, nil
}

// ProcessCPU is this process's CPU time so far (user + system): with
// Service.BrowserCPU, what a benchmark of the whole pipeline in one process
// spends.
func ProcessCPU() time.Duration { return selfCPU() }
