package learner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// CurriculumConfig configures the task scheduler. Zero values take the
// defaults named on each field.
type CurriculumConfig struct {
	// InFlight bounds the assignments waiting in the tasks topic, not yet
	// taken by an actor (default 8): a short queue keeps the tier mix
	// following recent success, and a non-empty one keeps executors from
	// waiting for work.
	InFlight int
	// ActorGroup is the actors' consumer group on the tasks topic, whose
	// lag is the queue (default: the catalog prefix + "actor").
	ActorGroup string
	// EvalFraction of assignments run greedily on the held-out test sites
	// (default 0.2); they are never trained on.
	EvalFraction float64
	// Window is the number of recent training episodes per tier whose
	// success decides promotion (default 40).
	Window int
	// Promote is the success rate over a full window that unlocks the next
	// tier (default 0.7).
	Promote float64
	// Revisit is the share of training assignments drawn from the tiers
	// below the frontier once one is unlocked (default 0.65). Frontier
	// episodes run several times longer (medium: 7 steps on average
	// against easy's 2), so at 0.4 the frontier took 70% of the steps and
	// the easy tier, on which a run is judged, got 55–70 episodes per
	// family in its last 11 minutes.
	Revisit float64
	// MaxTier is the hardest tier issued (default hard).
	MaxTier catalog.Tier
	// Demos is the number of demonstration assignments issued first, round
	// robin over every family's train sites (default 0).
	Demos int
	// GroupSize > 1 issues every training task that many times as one
	// GRPO group (default 1; the learner sets it for GRPO).
	GroupSize int
	// Families restricts the families (default: all of the suite that the
	// action space can express).
	Families []string
	// Suite is the task suite scheduled (default builtin): MiniWoB++ tasks
	// are tiered by miniwob.go, split by seed (catalog.TaskSplit) and never
	// given demonstrations (webenv has no scripted solution for them).
	Suite catalog.Suite
	// Focus weights a tier's families by recent training success when
	// drawing one: weight 1 + Focus × (1 − success over its last
	// familyWindow episodes), so an unsolved family is drawn at most
	// 1 + Focus times as often as a solved one (default 0, uniform, for the
	// built-in suite; 3 for a suite with MiniWoB++, whose 72 easy tasks
	// range from solved at random init to not yet learnt; a stuck family,
	// Patience, is drawn less). The bound
	// matters: drawing in proportion to 1.1 − success gave a family the heads
	// cannot express most of the practice (change log). Negative: uniform.
	Focus float64
	// FocusBy is what Focus follows (default FocusFailure): FocusFailure
	// the formula above; FocusSpread a family's disagreement, weight
	// 0.25 + (0.75 + Focus) × 4p(1 − p) of its recent training success p
	// (1 + Focus at p = ½), and 1 + Focus until it has familyWindow/2
	// episodes. Why: GRPO learns
	// only from a group whose returns differ, and in the 12-07 lm hour
	// 181 of 241 groups were all wins or all failures (solved
	// click-dialog and click-test-2, hopeless click-option), their
	// actors' time spent for no gradient.
	FocusBy string
	// Patience is the number of consecutive failed training episodes after
	// which a family counts as stuck and is drawn with weight StuckWeight
	// until it succeeds again (default 0, never stuck, for the built-in
	// suite; 40 for a suite with MiniWoB++). Focus alone gave the tasks the
	// action space can express but the policy cannot yet learn (click-pie,
	// simple-arithmetic, copy-paste: 0 successes in 350 episodes each) the
	// most practice, a third of an hour's episodes, and their full step
	// budget each time (change log).
	Patience int
	// StuckWeight is a stuck family's draw weight, against 1 for a solved
	// one (default 0.25).
	StuckWeight float64
	// MinPractice is the number of training episodes a family gets before
	// it can count as stuck; until then a family past Patience failures is
	// drawn with weight 1, as a solved one (default 0 for the built-in
	// suite; 150 for a suite with MiniWoB++). Patience alone starved
	// tasks that need several skills at once: in the third MiniWoB++ hour,
	// login-user failed its first 40 episodes and was drawn 14 times in
	// the 50 minutes after (54 in the hour, against 258 in the hour before,
	// whose early lucky successes kept it unstuck: 82% on test seeds), and
	// enter-password, stuck after 1 success in 47, was drawn 37 times in
	// the 40 minutes after (change log).
	MinPractice int
	// Seed seeds the scheduler's choices (default 1).
	Seed uint64
}

func (c *CurriculumConfig) defaults() {
	c.InFlight = cmp.Or(c.InFlight, 8)
	c.EvalFraction = cmp.Or(c.EvalFraction, 0.2)
	c.Window = cmp.Or(c.Window, 40)
	c.Promote = cmp.Or(c.Promote, 0.7)
	c.Revisit = cmp.Or(c.Revisit, 0.65)
	c.MaxTier = cmp.Or(c.MaxTier, catalog.Hard)
	c.GroupSize = cmp.Or(c.GroupSize, 1)
	c.Seed = cmp.Or(c.Seed, 1)
	c.Suite = cmp.Or(c.Suite, catalog.SuiteBuiltin)
	switch {
	case c.Focus == 0 && c.Suite.HasMiniWoB():
		c.Focus = 3
	case c.Focus < 0:
		c.Focus = 0
	}
	if c.Patience == 0 && c.Suite.HasMiniWoB() {
		c.Patience = 40
	}
	c.StuckWeight = cmp.Or(c.StuckWeight, 0.25)
	c.FocusBy = cmp.Or(c.FocusBy, FocusFailure)
	if c.MinPractice == 0 && c.Suite.HasMiniWoB() {
		c.MinPractice = 150
	}
}

// curriculum publishes tasks from easy to hard by recent success: it keeps
// InFlight assignments outstanding, unlocks a tier once the one below it
// succeeds often enough, keeps revisiting easier tiers, and spends a fixed
// fraction on greedy evaluation episodes on the held-out sites.
type curriculum struct {
	c    CurriculumConfig
	log  *slog.Logger
	rng  *rand.Rand
	fams map[catalog.Tier][]catalog.FamilyInfo
	all  []catalog.FamilyInfo

	mu          sync.Mutex
	recent      map[catalog.Tier][]bool
	byFamily    map[string][]bool // recent training success per family (Focus)
	failStreak  map[string]int    // consecutive failed training episodes per family (Patience)
	practiced   map[string]int    // training episodes per family (MinPractice)
	unlocked    catalog.Tier
	seed        int64
	demosIssued int
	issued      int
	heldSince   time.Time // zero: not holding

	// hold, when set, holds assignments back while it is true (the
	// learner's staleness bound, WithMaxStaleness), for at most maxHold at
	// a time: a hold the actors outwait (the actor's 30 s task pause) sends them to
	// their local tasks, which feed the backlog the hold waits out.
	hold    func() bool
	maxHold time.Duration

	producer  *kgo.Client
	consumer  *kgo.Client
	tasks     string
	instance  string
	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

func newCurriculum(c CurriculumConfig, log *slog.Logger) (*curriculum, error) {
	c.defaults()
	if c.EvalFraction < 0 || c.EvalFraction >= 1 {
		return nil, fmt.Errorf("invalid curriculum eval fraction %v: want [0, 1)", c.EvalFraction)
	}
	if c.Revisit < 0 || c.Revisit >= 1 {
		return nil, fmt.Errorf("invalid curriculum revisit share %v: want [0, 1)", c.Revisit)
	}
	if c.FocusBy != FocusFailure && c.FocusBy != FocusSpread {
		return nil, fmt.Errorf("invalid curriculum focus %q: want %q or %q", c.FocusBy, FocusFailure, FocusSpread)
	}
	if c.StuckWeight < 0 || c.Patience < 0 || c.MinPractice < 0 {
		return nil, errors.New("invalid curriculum: patience, stuck weight and minimum practice must not be negative")
	}
	if c.InFlight < 1 || c.Window < 1 || c.GroupSize < 1 || c.Demos < 0 {
		return nil, errors.New("invalid curriculum: in-flight, window and group size must be positive, demos not negative")
	}
	cu := &curriculum{c: c, log: log.With("component", "curriculum"), rng: rand.New(rand.NewPCG(c.Seed, 11)),
		fams:   map[catalog.Tier][]catalog.FamilyInfo{},
		recent: map[catalog.Tier][]bool{}, byFamily: map[string][]bool{}, failStreak: map[string]int{}, practiced: map[string]int{}, unlocked: catalog.Easy, seed: 1000}
	for _, f := range catalog.Schedulable(c.Suite) {
		if len(c.Families) > 0 && !slices.Contains(c.Families, f.Name) {
			continue
		}
		if f.Tier > c.MaxTier {
			continue
		}
		cu.fams[f.Tier] = append(cu.fams[f.Tier], f)
		cu.all = append(cu.all, f)
	}
	for _, f := range c.Families {
		if !slices.ContainsFunc(cu.all, func(fi catalog.FamilyInfo) bool { return fi.Name == f }) {
			return nil, fmt.Errorf("unable to schedule unknown family %q (or above the max tier)", f)
		}
	}
	if len(cu.all) == 0 {
		return nil, errors.New("unable to schedule: no family selected")
	}
	for cu.unlocked < c.MaxTier && len(cu.fams[cu.unlocked]) == 0 {
		cu.unlocked++
	}
	return cu, nil
}

func (cu *curriculum) start(ctx context.Context, f *kafka.Factory, cat *topics.Catalog, producer *kgo.Client, instance string, fail func(error)) error {
	cl, err := f.NewClient("learner-curriculum",
		kgo.ConsumeTopics(cat.Name(topics.Episodes)),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), // the joiner's transactions
		// Only episodes from now on decide: a restarted scheduler starts
		// easy again and is promoted as fast as the policy deserves.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()),
	)
	if err != nil {
		return err
	}
	cu.consumer, cu.producer, cu.tasks, cu.instance = cl, producer, cat.Name(topics.Tasks), instance
	if cu.c.ActorGroup == "" {
		cu.c.ActorGroup = cat.Prefix + "actor"
	}
	runCtx, cancel := context.WithCancel(context.Background())
	cu.cancel = cancel
	cu.done = make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := cu.follow(runCtx); err != nil {
			fail(fmt.Errorf("curriculum stopped following episodes: %w", err))
		}
	}()
	go func() { defer wg.Done(); cu.issue(runCtx) }()
	go func() { wg.Wait(); close(cu.done) }()
	cu.log.Info("curriculum running", "in_flight", cu.c.InFlight, "eval_fraction", cu.c.EvalFraction,
		"demos", cu.c.Demos, "group_size", cu.c.GroupSize, "families", len(cu.all), "max_tier", cu.c.MaxTier.String())
	return nil
}

// stop stops publishing and following episodes. It may be called again (the
// learner's StopProducing, then its Stop): a call after one that finished
// does nothing.
func (cu *curriculum) stop(ctx context.Context) error {
	if cu.cancel == nil {
		return nil
	}
	cu.cancel()
	select {
	case <-cu.done:
	case <-ctx.Done():
		return fmt.Errorf("unable to stop the curriculum in time: %w", ctx.Err())
	}
	cu.closeOnce.Do(cu.consumer.Close)
	return nil
}

// follow reads finished episodes: they free their assignment's slot and
// feed the success windows.
func (cu *curriculum) follow(ctx context.Context) error {
	l := &kafka.Loop{Name: "curriculum episodes", Poller: cu.consumer, Max: 256, Log: cu.log,
		Handle: func(_ context.Context, fs kgo.Fetches) error {
			for _, r := range fs.Records() {
				ep, err := eventspb.DecodeEpisode(r.Value)
				if err != nil {
					continue // the recorder keeps bad records; nothing to schedule on
				}
				cu.finished(ep)
			}
			return nil
		}}
	return l.Run(ctx)
}

func (cu *curriculum) finished(ep *eventspb.Episode) {
	cu.mu.Lock()
	defer cu.mu.Unlock()
	if ep.GetSplit() != eventspb.Split_SPLIT_TRAIN || ep.GetAborted() || ep.GetPolicyName() == "oracle" {
		return
	}
	tier := catalog.Tier(ep.GetTier())
	cu.byFamily[ep.GetFamily()] = window(cu.byFamily[ep.GetFamily()], ep.GetSuccess(), familyWindow)
	cu.practiced[ep.GetFamily()]++
	if ep.GetSuccess() {
		cu.failStreak[ep.GetFamily()] = 0
	} else {
		cu.failStreak[ep.GetFamily()]++
	}
	w := append(cu.recent[tier], ep.GetSuccess())
	if len(w) > cu.c.Window {
		w = w[len(w)-cu.c.Window:]
	}
	cu.recent[tier] = w
	if tier == cu.unlocked && cu.unlocked < cu.c.MaxTier && len(w) >= cu.c.Window && rate(w) >= cu.c.Promote {
		next := cu.unlocked + 1
		for next < cu.c.MaxTier && len(cu.fams[next]) == 0 {
			next++
		}
		if len(cu.fams[next]) > 0 {
			cu.unlocked = next
			cu.log.Info("curriculum promoted", "tier", next.String(), "success_below", rate(w))
		}
	}
}

func rate(w []bool) float64 {
	if len(w) == 0 {
		return 0
	}
	n := 0
	for _, ok := range w {
		if ok {
			n++
		}
	}
	return float64(n) / float64(len(w))
}

// issue keeps InFlight assignments queued: the queue is the actors'
// consumer-group lag on the tasks topic.
func (cu *curriculum) issue(ctx context.Context) {
	adm := kadm.NewClient(cu.producer)
	app.Every(ctx, 250*time.Millisecond, func(ctx context.Context) {
		queued, err := cu.queued(ctx, adm)
		if err != nil {
			if ctx.Err() == nil {
				cu.log.Warn("unable to read the task queue; retrying", "err", err)
			}
			return
		}
		for _, t := range cu.next(queued) {
			b, err := eventspb.Marshal(t)
			if err != nil {
				cu.log.Error("unable to encode a task", "err", err)
				continue
			}
			// Synchronous: the next lag reading must see these.
			if err := cu.producer.ProduceSync(ctx, &kgo.Record{Topic: cu.tasks, Key: []byte(t.GetTaskId()), Value: b}).FirstErr(); err != nil {
				if ctx.Err() == nil {
					cu.log.Warn("unable to publish a task", "task", t.GetTaskId(), "err", err)
				}
				break
			}
		}
	})
}

// queued is the number of assignments no actor has taken (committed) yet:
// a new group starts at the oldest assignment.
func (cu *curriculum) queued(ctx context.Context, adm *kadm.Client) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	lag, err := topics.ReadLag(ctx, adm, cu.c.ActorGroup, cu.tasks)
	n, _ := lag.Behind()
	return int(n), err
}

// next returns the assignments to publish when queued are waiting.
func (cu *curriculum) next(queued int) []*eventspb.Task {
	cu.mu.Lock()
	defer cu.mu.Unlock()
	if cu.holding(time.Now()) {
		return nil
	}
	var out []*eventspb.Task
	for queued+len(out) < cu.c.InFlight {
		out = append(out, cu.pick()...)
	}
	cu.issued += len(out)
	return out
}

// holding reports whether assignments are held back at now: while hold
// says so, for at most maxHold, after which one round is issued and the
// next hold starts. The caller holds cu.mu.
func (cu *curriculum) holding(now time.Time) bool {
	if cu.hold == nil || !cu.hold() {
		if !cu.heldSince.IsZero() {
			cu.log.Debug("staleness bound released", "held", now.Sub(cu.heldSince))
		}
		cu.heldSince = time.Time{}
		return false
	}
	switch {
	case cu.heldSince.IsZero():
		cu.heldSince = now
		cu.log.Debug("staleness bound holding tasks")
	case now.Sub(cu.heldSince) >= cu.maxHold:
		cu.heldSince = now // one round, then hold again
		return false
	}
	return true
}

// pick chooses the next assignment (a GRPO group is several).
func (cu *curriculum) pick() []*eventspb.Task {
	if demos := cu.demoFamilies(); cu.demosIssued < cu.c.Demos && len(demos) > 0 {
		f := demos[cu.demosIssued%len(demos)]
		cu.demosIssued++
		t := cu.task(f, cu.trainSite(f), eventspb.Split_SPLIT_TRAIN)
		t.Demo, t.PolicyName = true, "oracle"
		return []*eventspb.Task{t}
	}
	if cu.rng.Float64() < cu.c.EvalFraction {
		tier := catalog.Tier(1 + cu.rng.IntN(int(cu.unlocked)))
		for len(cu.fams[tier]) == 0 {
			tier = catalog.Tier(1 + cu.rng.IntN(int(cu.unlocked)))
		}
		f := cu.fams[tier][cu.rng.IntN(len(cu.fams[tier]))]
		t := cu.task(f, catalog.HeldOutSite(f), eventspb.Split_SPLIT_TEST)
		t.Greedy = true
		return []*eventspb.Task{t}
	}
	// The frontier tier most of the time, easier ones so they are not
	// forgotten.
	tier := cu.unlocked
	// Only tiers with families are revisited: a task set of one tier
	// (-families) has nothing below its frontier, and stepping down from an
	// empty tier never found one.
	var below []catalog.Tier
	for t := catalog.Easy; t < tier; t++ {
		if len(cu.fams[t]) > 0 {
			below = append(below, t)
		}
	}
	if len(below) > 0 && cu.rng.Float64() < cu.c.Revisit {
		tier = below[cu.rng.IntN(len(below))]
	}
	for len(cu.fams[tier]) == 0 && tier > catalog.Easy {
		tier--
	}
	f := cu.drawFamily(tier)
	t := cu.task(f, cu.trainSite(f), eventspb.Split_SPLIT_TRAIN)
	if cu.c.GroupSize < 2 {
		return []*eventspb.Task{t}
	}
	t.GroupId = t.GetTaskId() + "/" + t.GetEnvelope().GetEventId()
	t.GroupSize = uint32(cu.c.GroupSize)
	out := []*eventspb.Task{t}
	for range cu.c.GroupSize - 1 {
		m := proto.Clone(t).(*eventspb.Task)
		m.Envelope = eventspb.NewEnvelope(cu.instance)
		out = append(out, m)
	}
	return out
}

func (cu *curriculum) trainSite(f catalog.FamilyInfo) string {
	train := catalog.TrainSites(f)
	return train[cu.rng.IntN(len(train))]
}

func (cu *curriculum) task(f catalog.FamilyInfo, site string, split eventspb.Split) *eventspb.Task {
	cu.seed++
	seed := taskSeed(f, split, cu.seed)
	return &eventspb.Task{
		Envelope: eventspb.NewEnvelope(cu.instance),
		TaskId:   f.Name + "/" + site + "/seed-" + strconv.FormatInt(seed, 10),
		Site:     site, Family: f.Name, Seed: seed,
		Tier: eventspb.Tier(f.Tier), Split: split, MaxSteps: f.Tier.StepBudget(),
	}
}
