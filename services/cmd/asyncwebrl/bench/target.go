package bench

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/reporter"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// heldTarget judges bench train's target on a tier's held-out outcomes, in
// the order they finish: the success over the last window outcomes must
// reach the target and then stay at or above it for hold consecutive
// held-out outcomes (the one that reached it included). The time to the
// target is when that stretch began.
//
// A hold on the window's mean rather than an exponential moving average:
// the window is the one the run report's learning curves and TimeTo use, so
// the target means the same success over the same episodes (and hold 1 is
// the former one-crossing rule); an average's time constant would be a
// second smoothing to pick, and its value at the crossing would depend on
// how low the run started. A single crossing of a 40-episode window is
// noise-prone: a policy at 70% success reaches 80% over 40 episodes now and
// then; keeping it there for 20 more held-out episodes, each of which
// replaces one of the window's, is unlikely unless the success is there.
type heldTarget struct {
	target       float64
	window, hold int
	recent       []bool // the last window outcomes, oldest first
	successes    int    // in recent
	stretch      int    // consecutive outcomes with a full window at or above the target
}

func newHeldTarget(target float64, window, hold int) *heldTarget {
	return &heldTarget{target: target, window: window, hold: hold}
}

// add takes the next held-out outcome. began: the window reached the target
// with it after being below (a stretch begins; its time is the candidate
// time to the target); confirmed: the stretch has now lasted hold outcomes.
func (h *heldTarget) add(success bool) (began, confirmed bool) {
	h.recent = append(h.recent, success)
	if success {
		h.successes++
	}
	if len(h.recent) > h.window {
		if h.recent[0] {
			h.successes--
		}
		h.recent = h.recent[1:]
	}
	// The same comparison as reporter.Stats.TimeTo, so that hold 1 gives
	// its crossing.
	if len(h.recent) < h.window || float64(h.successes)/float64(h.window) < h.target {
		h.stretch = 0
		return false, false
	}
	h.stretch++
	return h.stretch == 1, h.stretch == h.hold
}

// targetWatch follows a run's committed episodes and tells when the tier's
// held-out success has reached the target and held it (heldTarget), on the
// episodes reporter.Stats counts, as the run report judges them.
type targetWatch struct {
	bt      trainFlags
	start   time.Time
	reached chan struct{}

	mu       sync.Mutex
	stats    *reporter.Stats
	judge    *heldTarget
	episodes int
	steps    int
	// at, atEps and atSteps: when the current (or, once done, the
	// confirmed) stretch at the target began.
	at      time.Duration
	atEps   int
	atSteps int
	newest  uint64
	done    bool
	// trained sums the training metrics of the versions published (one
	// weights event each), for their means; rlAt is when the first version
	// with a policy-gradient update came out (0: none yet).
	trained versionMetrics
	rlAt    time.Duration
	// ckpt keeps the versions and progress checkpoints need (nil
	// without --eval-every).
	ckpt *checkpointer
	// taskSteps: env steps of the run's training (not held-out, not
	// demonstration) episodes per task.
	taskSteps map[string]int
}

// versionMetrics sums what each published version trained on (its last
// update's): its clip fraction (the share of samples whose ratio the clip
// held), the mean staleness of its samples in versions, and the share of
// samples whose behaviour weight was capped (the decoupled objective's, 0
// in the plain one). Versions whose update had no policy sample (the
// behaviour-cloning warm start, or the initial weights) are left out: they
// clip nothing and are never stale.
type versionMetrics struct {
	n                       int
	clip, staleness, capped float64
}

func (m *versionMetrics) add(metrics map[string]float64) {
	if metrics["policy_samples"] <= 0 {
		return
	}
	m.n++
	m.clip += metrics["clip_frac"]
	m.staleness += metrics["staleness"]
	m.capped += metrics["behaviour_capped"]
}

// means returns the means over the versions counted (zero without one).
func (m versionMetrics) means() (clip, staleness, capped float64) {
	if m.n == 0 {
		return 0, 0, 0
	}
	n := float64(m.n)
	return m.clip / n, m.staleness / n, m.capped / n
}

func newTargetWatch(start time.Time, bt trainFlags) *targetWatch {
	w := &targetWatch{bt: bt, start: start, reached: make(chan struct{}), stats: reporter.NewStats(start),
		judge: newHeldTarget(bt.target, bt.window, bt.hold), taskSteps: map[string]int{}}
	if bt.evalEvery > 0 {
		w.ckpt = newCheckpointer(bt.evalEvery)
	}
	return w
}

func (w *targetWatch) follow(ctx context.Context, f *kafka.Factory, cat *topics.Catalog) error {
	cl, err := runReader(f, "bench-train-watch", cat.Name(topics.Episodes), cat.Name(topics.Weights), cat.Name(topics.Actions))
	if err != nil {
		return err
	}
	defer cl.Close()
	l := &kafka.Loop{Name: "bench train watch", Poller: cl,
		Handle: func(_ context.Context, fs kgo.Fetches) error {
			fs.EachRecord(func(r *kgo.Record) {
				switch r.Topic {
				case cat.Name(topics.Weights):
					if ev, err := eventspb.DecodeWeights(r.Value); err == nil {
						w.mu.Lock()
						if ev.GetVersion() > w.newest {
							w.trained.add(ev.GetMetrics())
							at := time.Unix(0, ev.GetCreatedAtUnixNano()).Sub(w.start)
							if w.rlAt == 0 && ev.GetMetrics()["policy_samples"] > 0 {
								w.rlAt = max(at, time.Nanosecond)
							}
							w.ckpt.addVersion(at, ev.GetVersion(), ev.GetOnnx())
						}
						w.newest = max(w.newest, ev.GetVersion())
						w.stats.AddWeights(ev.GetVersion(), time.Unix(0, ev.GetCreatedAtUnixNano()))
						w.mu.Unlock()
					}
					return
				case cat.Name(topics.Actions):
					if a, err := eventspb.DecodeAction(r.Value); err == nil {
						w.mu.Lock()
						w.stats.AddAction(a.GetEnvelope().GetProducer(), a.GetPolicyVersion(), time.Unix(0, a.GetEnvelope().GetProducedAtUnixNano()))
						w.mu.Unlock()
					}
					return
				}
				ep, err := eventspb.DecodeEpisode(r.Value)
				if err != nil {
					return
				}
				w.add(ep)
			})
			return nil
		}}
	return l.Run(ctx)
}

// add counts an episode and judges the target.
func (w *targetWatch) add(ep *eventspb.Episode) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.stats.Episodes()
	w.stats.AddEpisode(ep)
	// Stats leaves out demonstrations and tasks beyond the action space;
	// the judge takes the same episodes as the report's figures.
	counted := w.stats.Episodes() > n
	if ep.GetAborted() {
		return
	}
	w.episodes++
	w.steps += int(ep.GetLength())
	w.ckpt.addProgress(time.Unix(0, ep.GetEnvelope().GetProducedAtUnixNano()).Sub(w.start), w.episodes, w.steps)
	if ep.GetSplit() != eventspb.Split_SPLIT_TEST && ep.GetEnvelope().GetSource() != eventspb.Source_SOURCE_DEMO {
		w.taskSteps[ep.GetFamily()] += int(ep.GetLength())
	}
	// Only a held-out episode of the judged tier can move the target.
	if w.done || !counted || ep.GetSplit() != eventspb.Split_SPLIT_TEST || ep.GetTier() != eventspb.Tier(w.bt.tier) {
		return
	}
	began, confirmed := w.judge.add(ep.GetSuccess())
	if began {
		// The episode's finish, as reporter.Stats.TimeTo times it.
		w.at, w.atEps, w.atSteps = time.Unix(0, ep.GetEnvelope().GetProducedAtUnixNano()).Sub(w.start), w.episodes, w.steps
	}
	if confirmed {
		w.done = true
		close(w.reached)
	}
}

// progress is the periodic line: held-out and training success so far, and
// how long the held-out success has been at the target.
func (w *targetWatch) progress() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	test := w.stats.Recent(eventspb.Tier(w.bt.tier), true, w.bt.window, now)
	train := w.stats.Recent(eventspb.Tier(w.bt.tier), false, w.bt.window, now)
	s := fmt.Sprintf("%d episodes, %d steps, version %d, %s held-out %s (train %s)", w.episodes, w.steps, w.newest, w.bt.tier, fmtShare(test), fmtShare(train))
	if w.judge.stretch > 0 {
		s += fmt.Sprintf(", at the target for %d of %d held-out episodes since %s", w.judge.stretch, w.bt.hold, w.at.Round(time.Second))
	}
	return s
}

func fmtShare(r reporter.Rate) string {
	if r.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% of %d", 100*r.Value(), r.N)
}

func (w *targetWatch) result(mode string, wall time.Duration) trainRun {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := trainRun{mode: mode, reached: w.done, wall: wall, allSteps: w.steps, versions: w.newest,
		stepsPerSecond: float64(w.steps) / wall.Seconds(), episodesPerSecond: float64(w.episodes) / wall.Seconds()}
	end := time.Now()
	fin := w.stats.Recent(eventspb.Tier(w.bt.tier), true, w.bt.window, end)
	r.curve = w.stats.Curve(eventspb.Tier(w.bt.tier), true, w.bt.window, 15*time.Second, end)
	r.propagation = w.stats.PropagationDelays()
	r.finalRate, r.finalN = fin.Value(), fin.N
	r.clipFrac, r.staleness, r.behaviourCapped = w.trained.means()
	r.rlVersions, r.rlAt = w.trained.n, w.rlAt
	if w.done {
		r.toTarget, r.episodes, r.steps = w.at, w.atEps, w.atSteps
	} else {
		// A stretch still unconfirmed at the cap does not count.
		r.toTarget, r.episodes, r.steps = wall, w.episodes, w.steps
	}
	r.rolloutReached, r.rolloutAt = r.reached, r.toTarget
	r.checkpoints = w.ckpt.list(wall)
	r.taskSteps = maps.Clone(w.taskSteps)
	return r
}

// judgeCheckpoints makes the evaluated checkpoints the run's judge: the
// time, episodes and steps to the first checkpoint at the target that the
// next confirms, or the whole run when none is.
func (r *trainRun) judgeCheckpoints(target float64) {
	if k, ok := checkpointTarget(r.checkpoints, target); ok {
		cp := r.checkpoints[k]
		r.reached, r.toTarget, r.episodes, r.steps = true, cp.at, cp.episodes, cp.steps
		return
	}
	r.reached, r.toTarget, r.steps = false, r.wall, r.allSteps
	if n := len(r.checkpoints); n > 0 {
		r.episodes = r.checkpoints[n-1].episodes
	}
}

// runReader is a client that reads a run's topics from their start, the
// committed records only, within half a second of their commit: what the
// benches that watch a pipeline (bench train's target, bench pipeline's
// count) read it with.
func runReader(f *kafka.Factory, name string, topicNames ...string) (*kgo.Client, error) {
	return f.NewClient(name, kgo.ConsumeTopics(topicNames...), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(500*time.Millisecond))
}
