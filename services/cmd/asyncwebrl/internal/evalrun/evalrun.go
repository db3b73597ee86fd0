package evalrun

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Config sets up a held-out evaluation.
type Config struct {
	Config  *config.Config
	Factory *kafka.Factory
	// Prefix names the evaluation's own throwaway topics.
	Prefix string
	// Suite is the suite whose families are evaluated (default builtin);
	// with MiniWoB++ the server mounts Config.Webenv.MiniWoBDir.
	Suite catalog.Suite
	// Families, when set, are evaluated whatever their tier; otherwise the
	// suite's schedulable families of Tier (catalog.Schedulable: never a
	// MiniWoB++ task the action space cannot express).
	Families []catalog.FamilyInfo
	// Tier selects the families (default easy).
	Tier catalog.Tier
	// Episodes per family (default 10), seeds SeedBase, SeedBase+1, ... on
	// a built-in family's test site, and the test seeds
	// catalog.MiniWoBSeed(test, SeedBase), ... of a MiniWoB++ task: the same
	// problems for every model evaluated with the same config.
	Episodes  int
	SeedBase  int64
	Executors int
	// Stall fails the evaluation when no episode has ended for this long
	// (default 5m: a MiniWoB++ or built-in episode ends within a minute even
	// on a loaded machine). A wall-clock deadline for the whole evaluation
	// threw away 3,406 finished episodes of 3,500 on a slower machine.
	Stall time.Duration
	// Timeout, when set, caps the whole evaluation (default none).
	Timeout time.Duration
	// Sampled acts by sampling the policy's distribution instead of taking
	// its most likely action (default false: greedy). The random-init
	// baseline is sampled: its argmax is one arbitrary deterministic
	// policy, which scored on 3 of MiniWoB++'s 34 WGE tasks once a feature
	// column was added (0.9%, where the greedy baseline of the network
	// before had scored 8.9%), while its samples are the random policy
	// over the action space.
	Sampled bool
	// Keep leaves the evaluation's topics in place (default: deleted when it
	// ends), so the recorder can archive its episodes for inspection.
	Keep bool
	// Policy, when set, acts instead of the network on onnx (a backend
	// that is not the features network: -policy-backend openai).
	Policy actor.Policy
	Log    *slog.Logger
}

// Result is the greedy result per family on its held-out test site or
// seeds. Success counts episodes that ended with raw reward > 0 (the
// rubric's success on a built-in family); Strict those with raw reward 1,
// MiniWoB++'s success; Raw and Decayed sum the raw and time-decayed
// rewards, whose means are the task's score as the published tables count
// it and the figure MiniWoB++ reports beside it. TimedOut counts episodes
// the page's own time limit ended; Cut those the step budget ended before
// the page did. A cut MiniWoB++ episode scores −1 (raw and decayed), as
// the page's timeout would have scored it: the published tables run an
// episode until the page ends it, and an answer never given is a failure,
// not 0 (until 12-05 it counted 0, above a wrong answer's −1).
type Result struct {
	Success, Strict, Episodes, Aborted, TimedOut, Cut map[string]int
	Raw, Decayed                                      map[string]float64
	Took                                              time.Duration
}

// NewResult is an empty Result.
func NewResult() Result {
	return Result{Success: map[string]int{}, Strict: map[string]int{}, Episodes: map[string]int{}, Aborted: map[string]int{},
		TimedOut: map[string]int{}, Cut: map[string]int{}, Raw: map[string]float64{}, Decayed: map[string]float64{}}
}

// Add counts family's episode that rw ended.
func (r Result) Add(family string, rw *eventspb.Reward) {
	r.Episodes[family]++
	if rw.GetTimedOut() {
		r.TimedOut[family]++
	}
	raw, decayed := rw.GetRawReward(), rw.GetDecayedReward()
	if rw.GetTruncated() && catalog.IsMiniWoB(family) {
		r.Cut[family]++
		raw, decayed = -1, -1
	}
	r.Decayed[family] += decayed
	r.Raw[family] += raw
	if !rw.GetAborted() && catalog.StrictSuccess(rw.GetRawReward()) {
		r.Strict[family]++
	}
	switch {
	case rw.GetAborted():
		r.Aborted[family]++
	case rw.GetSuccess():
		r.Success[family]++
	}
}

// MeanRaw is a family's score: the mean raw reward of its episodes, in
// [−1, 1] on MiniWoB++.
func (r Result) MeanRaw(family string) float64 { return r.perEpisode(r.Raw, family) }

// MeanScore is the mean over families of MeanRaw (each task counts once,
// as in the published tables).
func (r Result) MeanScore() float64 {
	s, n := 0.0, 0
	for f := range r.Episodes {
		s += r.MeanRaw(f)
		n++
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// StrictRate is the overall share of strict successes.
func (r Result) StrictRate() float64 { return r.share(r.Strict) }

// MeanDecayed is a family's mean time-decayed reward over its episodes.
func (r Result) MeanDecayed(family string) float64 { return r.perEpisode(r.Decayed, family) }

// Rate is the overall success rate.
func (r Result) Rate() float64 { return r.share(r.Success) }

// perEpisode is sum's value for family over the family's episodes (0
// without episodes).
func (r Result) perEpisode(sum map[string]float64, family string) float64 {
	if r.Episodes[family] == 0 {
		return 0
	}
	return sum[family] / float64(r.Episodes[family])
}

// share is the overall share of episodes that counts (per family) counts.
func (r Result) share(counts map[string]int) float64 {
	s, n := 0, 0
	for f, e := range r.Episodes {
		s += counts[f]
		n += e
	}
	if n == 0 {
		return 0
	}
	return float64(s) / float64(n)
}

// Evaluate runs the model greedily on the held-out sites: a webenv server
// of its own, an actor serving onnx with its executors, tasks with known
// episode ids on throwaway topics, and the done rewards read back. The same
// config evaluates two models on the same task seeds.
func Evaluate(ctx context.Context, c Config, name string, onnx []byte) (Result, error) {
	res := NewResult()
	t0 := time.Now()
	c.Episodes = cmp.Or(c.Episodes, 10)
	c.Tier = cmp.Or(c.Tier, catalog.Easy)
	c.Executors = cmp.Or(c.Executors, 8)
	c.Stall = cmp.Or(c.Stall, 5*time.Minute)
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	cat := topics.New(topics.WithPrefix(c.Prefix), topics.WithPartitions(int32(c.Config.TopicPartitions)), topics.WithReplication(int16(c.Config.TopicReplication)))
	cl, err := c.Factory.NewClient("replay-eval")
	if err != nil {
		return res, err
	}
	defer cl.Close()
	if _, err := topics.Apply(ctx, cl, cat); err != nil {
		return res, err
	}
	defer func() {
		if c.Keep {
			return
		}
		dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer dcancel()
		_, _ = kadm.NewClient(cl).DeleteTopics(dctx, cat.Names()...)
	}()

	fams := c.Families
	if fams == nil {
		for _, f := range catalog.Schedulable(c.Suite) {
			if f.Tier == c.Tier {
				fams = append(fams, f)
			}
		}
	}
	suite := c.Suite
	for _, f := range fams {
		if catalog.IsMiniWoB(f.Name) && !suite.HasMiniWoB() {
			suite = catalog.SuiteAll // named MiniWoB++ tasks need the pages
		}
	}
	srv, err := webenv.New(webenv.WithAddr("127.0.0.1:0"), webenv.WithSplit(catalog.SplitAll), webenv.WithLogger(c.Log),
		webenv.WithSuite(suite), webenv.WithMiniWoBDir(c.Config.Webenv.MiniWoBDir))
	if err != nil {
		return res, err
	}
	if err := srv.Start(ctx); err != nil {
		return res, err
	}
	defer func() { _ = srv.Stop(context.Background()) }()
	aopts := []actor.Option{
		actor.WithExecutors(c.Executors), actor.WithWebenvURL(srv.URL()), actor.WithInitialONNX(onnx),
		actor.WithPolicyName(name), actor.WithTaskGrace(time.Hour), actor.WithLogger(c.Log),
		actor.WithMetrics(prometheus.NewRegistry()), actor.WithInstanceID("eval-" + name),
		actor.WithMiniWoBTimeLimit(c.Config.Actor.MiniWoBTimeLimit)}
	if c.Policy != nil {
		aopts = append(aopts, actor.WithPolicy(func([]byte, uint64) (actor.Policy, error) { return c.Policy, nil }))
	}
	a, err := actor.New(c.Config, c.Factory, cat, aopts...)
	if err != nil {
		return res, err
	}
	if err := a.Start(ctx); err != nil {
		return res, err
	}
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), time.Minute)
		defer scancel()
		_ = a.Stop(sctx)
	}()

	family := map[string]string{}
	for _, f := range fams {
		for i := range c.Episodes {
			t := Task(f, c.SeedBase+int64(i), name, c.Sampled)
			family[t.GetEnvelope().GetEpisodeId()] = f.Name
			b, err := eventspb.Marshal(t)
			if err != nil {
				return res, err
			}
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: cat.Name(topics.Tasks), Key: []byte(t.GetTaskId()), Value: b}).FirstErr(); err != nil {
				return res, fmt.Errorf("unable to publish evaluation tasks: %w", err)
			}
		}
	}
	rd, err := c.Factory.NewClient("replay-eval-rewards", kgo.ConsumeTopics(cat.Name(topics.Rewards)), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return res, err
	}
	defer rd.Close()
	done := map[string]bool{}
	lastEnd, lastLog := time.Now(), time.Now()
	l := &kafka.Loop{Name: "replay evaluation rewards", Poller: rd, Log: c.Log,
		Idle: func() time.Duration { return max(time.Millisecond, time.Until(lastEnd.Add(c.Stall))) },
		Handle: func(_ context.Context, fs kgo.Fetches) error {
			before := len(done)
			fs.EachRecord(func(r *kgo.Record) {
				rw, err := eventspb.DecodeReward(r.Value)
				if err != nil || !rw.GetDone() {
					return
				}
				ep := rw.GetEnvelope().GetEpisodeId()
				f, ok := family[ep]
				if !ok || done[ep] {
					return
				}
				done[ep] = true
				res.Add(f, rw)
			})
			// Judged after the records are counted: a poll cut by the stall
			// deadline may still return episodes that ended just before it.
			if len(done) > before {
				lastEnd = time.Now()
			} else if time.Since(lastEnd) >= c.Stall {
				return fmt.Errorf("unable to finish the evaluation of %s (%d of %d episodes done): no episode ended for %s", name, len(done), len(family), c.Stall)
			}
			if time.Since(lastLog) >= time.Minute {
				lastLog = time.Now()
				c.Log.Info("evaluation progress", "policy", name, "done", len(done), "episodes", len(family), "elapsed", time.Since(t0).Round(time.Second))
			}
			if len(done) >= len(family) {
				return kafka.ErrStop
			}
			return nil
		}}
	if len(done) < len(family) {
		if err := l.Run(ctx); err != nil {
			return res, err
		}
	}
	if err := ctx.Err(); err != nil && len(done) < len(family) {
		return res, fmt.Errorf("unable to finish the evaluation of %s (%d of %d episodes done): %w", name, len(done), len(family), err)
	}
	res.Took = time.Since(t0)
	return res, nil
}

// Families returns the evaluated families in order.
func (r Result) Families() []string {
	var out []string
	for f := range r.Episodes {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// Task is the task of one evaluation episode of family f: seed on a
// built-in family's held-out site, the seed's test seed on a MiniWoB++
// task; greedy unless sampled.
func Task(f catalog.FamilyInfo, seed int64, policy string, sampled bool) *eventspb.Task {
	site := catalog.HeldOutSite(f)
	if catalog.IsMiniWoB(f.Name) {
		seed = catalog.MiniWoBSeed(catalog.SplitTest, seed)
	}
	env := eventspb.NewEnvelope("replay-eval")
	env.EpisodeId = fmt.Sprintf("eval-%s-%s-%d", policy, f.Name, seed)
	return &eventspb.Task{Envelope: env, TaskId: f.Name + "/" + site + "/seed-" + strconv.FormatInt(seed, 10),
		Site: site, Family: f.Name, Seed: seed, Tier: eventspb.Tier(f.Tier), Split: eventspb.Split_SPLIT_TEST,
		MaxSteps: f.Tier.StepBudget(), Greedy: !sampled, PolicyName: policy}
}
