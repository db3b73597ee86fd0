package actor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

// taskSource hands tasks to executors: assignments from the tasks topic
// (a consumer group, so several actors share them) and, when no assignment
// has arrived for the grace period, tasks of the local default generator, so
// an actor without a scheduler still works. Once a scheduler has been heard
// from, the wait is the longer pause: a scheduler holds assignments back
// while its learner catches up (learner.WithMaxStaleness), and local tasks
// would undo that. As soon as assignments flow again, they win.
type taskSource struct {
	grace time.Duration
	pause time.Duration
	log   *slog.Logger
	cl    *kgo.Client // nil: local generator only
	in    chan offered
	gen   *localTasks

	mu    sync.Mutex
	last  time.Time // last assignment received (or the start)
	heard bool      // an assignment was received

	stopped chan struct{}
}

// offered is a consumed assignment; taking it marks its record for commit.
type offered struct {
	task *eventspb.Task
	rec  *kgo.Record
}

func newTaskSource(cl *kgo.Client, gen *localTasks, grace, pause time.Duration, log *slog.Logger) *taskSource {
	return &taskSource{grace: grace, pause: max(grace, pause), log: log, cl: cl, in: make(chan offered), gen: gen, last: time.Now(), stopped: make(chan struct{})}
}

// run polls the tasks topic until ctx ends.
func (s *taskSource) run(ctx context.Context, bad func()) error {
	defer close(s.stopped)
	if s.cl == nil {
		return nil
	}
	l := &kafka.Loop{Name: "actor tasks", Poller: s.cl, Max: 64, Log: s.log,
		Handle: func(ctx context.Context, fs kgo.Fetches) error {
			for _, r := range fs.Records() {
				task, err := eventspb.DecodeTask(r.Value)
				if err != nil {
					// A bad assignment is skipped, not retried forever; the
					// recorder keeps the raw record for analysis.
					s.log.Warn("skipping an undecodable task", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", err)
					bad()
					s.cl.MarkCommitRecords(r)
					continue
				}
				select {
				case s.in <- offered{task: task, rec: r}:
				case <-ctx.Done():
					return kafka.ErrStop
				}
			}
			return nil
		}}
	return l.Run(ctx)
}

// next returns the next task. It waits for an assignment while they flow,
// and falls back to the local generator after the grace period without one.
func (s *taskSource) next(ctx context.Context) (*eventspb.Task, error) {
	select {
	case o := <-s.in:
		return s.took(o), nil
	default:
	}
	wait := s.fallbackIn(time.Now())
	if wait <= 0 || s.cl == nil {
		return s.gen.next(), nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case o := <-s.in:
		return s.took(o), nil
	case <-t.C:
		return s.gen.next(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fallbackIn is how long from now an executor waits for an assignment
// before the local generator supplies its task.
func (s *taskSource) fallbackIn(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.heard {
		return s.pause - now.Sub(s.last)
	}
	return s.grace - now.Sub(s.last)
}

func (s *taskSource) took(o offered) *eventspb.Task {
	s.mu.Lock()
	s.last, s.heard = time.Now(), true
	s.mu.Unlock()
	s.cl.MarkCommitRecords(o.rec)
	return o.task
}

// localTasks is the default generator: the built-in families on their train
// sites (or the families named, MiniWoB++ tasks included), round robin over
// (family, site), seeds increasing; a MiniWoB++ task's seeds are mapped
// into its train range (catalog.MiniWoBSeed).
type localTasks struct {
	producer string
	mu       sync.Mutex
	pairs    []taskPair
	i        int
	seed     int64
}

type taskPair struct {
	family, site string
	tier         catalog.Tier
}

func newLocalTasks(producer string, families []string, firstSeed int64) (*localTasks, error) {
	g := &localTasks{producer: producer, seed: firstSeed}
	fams := catalog.Families()
	if len(families) > 0 {
		fams = fams[:0]
		for _, name := range families {
			f, ok := catalog.LookupFamily(name)
			switch {
			case !ok:
				return nil, fmt.Errorf("unable to generate tasks: unknown family %q", name)
			case f.Unsupported != "":
				// Never a silent failure in the figures: such a task is
				// not trained on at all.
				return nil, fmt.Errorf("unable to generate tasks: %s is beyond the action space: %s", name, f.Unsupported)
			}
			fams = append(fams, f)
		}
	}
	for _, f := range fams {
		for _, s := range catalog.TrainSites(f) {
			g.pairs = append(g.pairs, taskPair{family: f.Name, site: s, tier: f.Tier})
		}
	}
	if len(g.pairs) == 0 {
		return nil, errors.New("unable to generate tasks: no family with a train site")
	}
	return g, nil
}

func (g *localTasks) next() *eventspb.Task {
	g.mu.Lock()
	p := g.pairs[g.i%len(g.pairs)]
	seed := g.seed
	g.i++
	if g.i%len(g.pairs) == 0 {
		g.seed++
	}
	g.mu.Unlock()
	if catalog.IsMiniWoB(p.family) {
		seed = catalog.MiniWoBSeed(catalog.SplitTrain, seed)
	}
	return &eventspb.Task{
		Envelope: eventspb.NewEnvelope(g.producer),
		TaskId:   p.family + "/" + p.site + "/seed-" + strconv.FormatInt(seed, 10),
		Site:     p.site,
		Family:   p.family,
		Seed:     seed,
		Tier:     tierOf(p.tier),
		Split:    eventspb.Split_SPLIT_TRAIN,
	}
}

func tierOf(t catalog.Tier) eventspb.Tier {
	switch t {
	case catalog.Easy:
		return eventspb.Tier_TIER_EASY
	case catalog.Medium:
		return eventspb.Tier_TIER_MEDIUM
	case catalog.Hard:
		return eventspb.Tier_TIER_HARD
	}
	return eventspb.Tier_TIER_UNSPECIFIED
}

// taskRef completes an assignment's identity for observations: the tier and
// split from webenv when the scheduler left them out.
func taskRef(t *eventspb.Task) *eventspb.TaskRef {
	ref := &eventspb.TaskRef{
		TaskId: t.GetTaskId(), Site: t.GetSite(), Family: t.GetFamily(), Seed: t.GetSeed(),
		Tier: t.GetTier(), Split: t.GetSplit(), GroupId: t.GetGroupId(),
	}
	if ref.Tier == eventspb.Tier_TIER_UNSPECIFIED {
		if f, ok := catalog.LookupFamily(ref.Family); ok {
			ref.Tier = tierOf(f.Tier)
		}
	}
	if ref.Split == eventspb.Split_SPLIT_UNSPECIFIED && ref.Family != "" && ref.Site != "" {
		switch catalog.TaskSplit(ref.Family, ref.Site, ref.Seed) {
		case catalog.SplitTrain:
			ref.Split = eventspb.Split_SPLIT_TRAIN
		case catalog.SplitTest:
			ref.Split = eventspb.Split_SPLIT_TEST
		}
	}
	return ref
}
