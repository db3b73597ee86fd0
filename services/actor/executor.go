package actor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/oracle"
)

// executor is one isolated browser context (a tab in a browser context of
// its own) and the episode it runs. Its three steps, begin, think and act,
// are shared by both modes: async chains them per executor, sync runs each
// of them for all executors between barriers.
type executor struct {
	s    *Service
	idx  int
	name string
	slot int
	rng  *rand.Rand
	ts   *timeSplit

	e       *env.Env
	gen     uint64 // generation of the browser e lives in
	blocked atomic.Uint64
	// aborts counts episodes aborted in a row: the executor backs off, so
	// a broken webenv or browser does not turn into a storm of episodes.
	aborts int
	// retry is the task of an episode a crash cut, to run again on the
	// fresh tab before the next assignment (retryTask); nil when none.
	retry *eventspb.Task

	ep *episode
}

// episode is the executor's episode in progress.
type episode struct {
	id string
	// task is the assignment it runs, and attempt its run of it: 0, then
	// 1.. for the retries after crashes (WithCrashRetries).
	task     *eventspb.Task
	attempt  int
	ref      *eventspb.TaskRef
	maxSteps uint32
	step     uint32                // t: s_t is obs
	obs      *eventspb.Observation // the stable s_t decisions are taken on
	scaleY   float64               // frame pixels per CSS pixel of obs
	greedy   bool                  // take the most likely action (evaluation)
	// prevAction and prevBid describe a_t-1 for the observation of s_t;
	// prev is a_t-1 itself, taken on a page at prevURL.
	prevAction, prevBid string
	prev                *eventspb.Action
	prevURL             string
	// history is the episode's actions so far, oldest first (Query's
	// History: at most maxSteps small events).
	history []*eventspb.Action
	// mem is what the episode's observations remember (Observation.memory).
	mem *Memory
	// tried holds, in greedy episodes, the actions taken from each page
	// state (pageState) so far: none is taken from the same state again.
	tried map[string][]*eventspb.Action
	demo  *demoPlan // non-nil: a demonstration episode
}

// source is the origin its events carry: a demonstration's observations
// and rewards are SOURCE_DEMO like its actions (Task.demo), so that every
// event of the episode, and the joiner's summary of it, says so.
func (ep *episode) source() eventspb.Source {
	if ep.demo != nil {
		return eventspb.Source_SOURCE_DEMO
	}
	return eventspb.Source_SOURCE_POLICY
}

// decision is a chosen action, published, waiting to be executed.
type decision struct {
	ev  *eventspb.Action
	act env.Action
}

// errAborted marks an episode that ended by infrastructure; it was recorded
// with an aborted reward and the executor moves on.
var errAborted = errors.New("episode aborted")

func newExecutor(s *Service, idx int) *executor {
	return &executor{
		s:    s,
		idx:  idx,
		name: s.opts.instance + "/executor-" + strconv.Itoa(idx),
		slot: idx % len(s.pool.slots),
		rng:  rand.New(rand.NewPCG(s.opts.sampleSeed, uint64(idx)+1)),
		ts:   newTimeSplit(),
	}
}

// open creates the executor's tab on its browser: an isolated browser
// context, the origin allowlist, the hidden caret.
func (x *executor) open(ctx context.Context) error {
	b, gen, err := x.s.pool.get(x.slot)
	if err != nil {
		return err
	}
	opts := []env.Option{
		env.WithSettler(x.s.settler),
		env.WithTabOptions(chromedp.WithNewBrowserContext()),
		env.WithLogger(x.s.log),
		env.WithShaping(x.s.opts.shaping),
		env.WithRequestPerAction(x.s.opts.requestPerAction),
		env.WithMiniWoBTimeLimit(x.s.opts.miniwobTimeLimit),
	}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	e, err := env.New(octx, b, x.s.webenvURL, opts...)
	if err != nil {
		return fmt.Errorf("unable to open executor %d's tab: %w", x.idx, err)
	}
	tab := e.TabContext()
	if err := x.s.allow.install(tab, x.onBlocked); err != nil {
		_ = e.Close()
		return fmt.Errorf("unable to police executor %d's tab: %w", x.idx, err)
	}
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: tabScript}); err != nil {
		_ = e.Close()
		return fmt.Errorf("unable to set up executor %d's tab: %w", x.idx, err)
	}
	x.e, x.gen = e, gen
	return nil
}

// tabScript runs in every document of an executor's tab before the page's
// own scripts: it hides the caret (CaretCSS) and defines the settler's
// in-page calm wait (calmScript).
var tabScript = `(function () {
  function add() {
    var s = document.createElement('style');
    s.setAttribute('data-asyncwebrl', 'caret');
    s.textContent = ` + strconv.Quote(CaretCSS) + `;
    (document.head || document.documentElement).appendChild(s);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', add); else add();
})();
` + calmScript

func (x *executor) onBlocked(u string) {
	x.blocked.Add(1)
	x.s.c.blocked.Add(1)
	x.s.m.blocked.Inc()
	x.s.log.Debug("request blocked by the origin allowlist", "executor", x.idx, "url", clip(u, 200))
}

// close closes the executor's tab.
func (x *executor) close() {
	if x.e != nil {
		_ = x.e.Close()
		x.e = nil
	}
}

// recover brings the executor back after a browser error: the browser is
// restarted when it is gone (once, whichever executor notices first) and a
// new tab is opened. It retries until ctx ends.
func (x *executor) recover(ctx context.Context, cause error) error {
	x.close()
	bo := backoff.Backoff{Min: 100 * time.Millisecond, Max: 5 * time.Second}
	for {
		b, gen, err := x.s.pool.get(x.slot)
		if err != nil {
			return err
		}
		if gen == x.gen && !alive(ctx, b, 5*time.Second) {
			if err := x.s.pool.restart(ctx, x.slot, gen, cause.Error()); err != nil {
				return err
			}
		}
		if err := x.open(ctx); err == nil {
			return nil
		} else if ctx.Err() != nil {
			return ctx.Err()
		} else {
			x.s.log.Warn("unable to reopen an executor's tab", "executor", x.idx, "err", err)
			// The browser may have died right after the check: next
			// time round it is restarted.
			x.gen = gen
		}
		if err := bo.Wait(ctx); err != nil {
			return err
		}
	}
}

// begin takes a task and starts its episode: reset, then a stable s_0.
func (x *executor) begin(ctx context.Context) error {
	t0 := time.Now()
	task, attempt := x.retry, 0
	if task != nil {
		x.retry, attempt = nil, retryAttempt(task)
	} else {
		var err error
		if task, err = x.s.tasks.next(ctx); err != nil {
			return err
		}
	}
	var err error
	t0 = x.ts.since(phIdle, t0)
	if x.e == nil {
		if err := x.recover(ctx, errors.New("no tab")); err != nil {
			return err
		}
		t0 = x.ts.since(phAct, t0)
	}
	ep := &episode{id: task.GetEnvelope().GetEpisodeId(), task: task, attempt: attempt, ref: taskRef(task), maxSteps: task.GetMaxSteps(), mem: NewMemory(x.s.opts.memorySteps)}
	if ep.id == "" {
		// A task of the local generator has no id: the episode's becomes
		// the task's, so that a retry of it (retry.go) names this episode.
		ep.id = eventspb.NewEventID()
		ep.task = withEpisodeID(task, ep.id)
	}
	if ep.maxSteps == 0 {
		ep.maxSteps = uint32(x.s.opts.maxSteps)
	}
	ep.greedy = task.GetGreedy()
	x.ep = ep
	// A MiniWoB++ page is solved as it goes: its solver starts once the
	// first page settled (liveDemo).
	live := task.GetDemo() && catalog.IsMiniWoB(task.GetFamily())
	switch {
	case live:
		ep.demo = &demoPlan{}
		if _, ok := oracle.SolverFor(task.GetFamily()); !ok {
			return x.abort(0, "demo", "no scripted solver for "+task.GetFamily())
		}
	case task.GetDemo():
		if ep.demo, err = newDemoPlan(task); err != nil {
			return x.abort(0, "demo", err.Error())
		}
	}
	rctx, cancel := context.WithTimeout(ctx, x.s.opts.stepTimeout)
	o, err := x.e.Reset(rctx, env.TaskRef{Family: task.GetFamily(), Site: task.GetSite(), Seed: task.GetSeed()})
	cancel()
	if err != nil {
		return x.fail(ctx, 0, err, "reset")
	}
	x.ts.add(phWait, o.SettleWait)
	x.ts.add(phAct, time.Since(t0)-o.SettleWait)
	first, stable, done, err := x.settle(ctx, 0, o, false)
	if err != nil {
		return x.fail(ctx, 0, err, "reset")
	}
	switch {
	case done:
		return x.abort(0, "error", "the task ended before its first state")
	case !stable:
		return x.abort(0, "unstable", "the first page of the task never settled")
	}
	ep.obs = first
	if live {
		// Started once the page settled: the solver reads the page, which
		// the settler must have to itself.
		ep.demo.live = startLiveDemo(ctx, x.e, env.TaskRef{Family: task.GetFamily(), Site: task.GetSite(), Seed: task.GetSeed()}, o)
	}
	return nil
}

// settle publishes the observation of s_step and, while it is not stable
// and the page is not done, waits for the page again (up to the resettle
// budget), publishing each new observation. It returns the last one.
func (x *executor) settle(ctx context.Context, step uint32, o *env.Observation, done bool) (*eventspb.Observation, bool, bool, error) {
	ep := x.ep
	for try := 0; ; try++ {
		t0 := time.Now()
		ev, err := x.s.obs.observation(x.name, ep.id, step, ep.ref, o, done)
		if err != nil {
			return nil, false, done, err
		}
		ev.PreviousAction, ev.PreviousBid = ep.prevAction, ep.prevBid
		ep.mem.Recall(ev)
		ev.Envelope.Source = ep.source()
		if err := x.s.pub.send(x.s.pub.obs, ep.id, ev); err != nil {
			return nil, false, done, err
		}
		x.ts.since(phObserve, t0)
		if o.Stable || done {
			if ev.GetHeight() > 0 && o.Viewport.H > 0 {
				ep.scaleY = float64(ev.GetHeight()) / float64(o.Viewport.H)
			}
			return ev, o.Stable, done, nil
		}
		x.s.c.unstable.Add(1)
		x.s.m.unstable.Inc()
		if try >= x.s.opts.resettles {
			return ev, false, done, nil
		}
		t0 = time.Now()
		sctx, cancel := context.WithTimeout(ctx, x.s.opts.stepTimeout)
		o, done, err = x.e.Resettle(sctx)
		cancel()
		if err != nil {
			return nil, false, done, err
		}
		x.ts.add(phWait, o.SettleWait)
		x.ts.add(phObserve, time.Since(t0)-o.SettleWait)
	}
}

// think decides the action on the stable s_t: featurize, batched
// inference, sampling.
func (x *executor) think(ctx context.Context) (*decision, error) {
	if x.ep.demo != nil {
		return x.demoDecide(ctx)
	}
	t0 := time.Now()
	f, err := x.featurize(ctx)
	if err != nil {
		return nil, err
	}
	x.ts.since(phThink, t0)
	return x.decide(ctx, f)
}

// featurize is think's first half, the policy's Prepare (the sync mode
// runs it for every executor before one batched decision).
func (x *executor) featurize(ctx context.Context) (Input, error) {
	in, err := x.s.policy.Prepare(x.ep.obs)
	if err != nil {
		return nil, x.fail(ctx, x.ep.step, err, "featurize")
	}
	return in, nil
}

// decide is think's second half: the policy's Decide (inference in the
// shared batching server and sampling, for the ONNX policy). The action
// event is published before it is executed, stamped with the version of
// the weights that chose it.
func (x *executor) decide(ctx context.Context, in Input) (*decision, error) {
	ep := x.ep
	if ep.demo != nil {
		return x.demoDecide(ctx)
	}
	t0 := time.Now()
	q := Query{Greedy: ep.greedy, RNG: x.rng, History: ep.history}
	state := ""
	if ep.greedy {
		// Evaluation: the argmax, but never the action just taken on the
		// same page nor one already taken from this page state
		// (policy.GreedyAvoiding says why).
		state = pageState(ep.obs)
		q.Avoid = ep.tried[state]
		if ep.prev != nil && ep.prevURL == ep.obs.GetUrl() {
			q.Avoid = append(slices.Clip(q.Avoid), ep.prev)
		}
	}
	out, err := x.s.policy.Decide(ctx, in, q)
	if dle := (*deadLetterError)(nil); errors.As(err, &dle) {
		x.deadLetter(dle.dl)
	}
	if err != nil {
		stage := "inference"
		var se *stageError
		if errors.As(err, &se) {
			stage = se.stage
		}
		return nil, x.fail(ctx, ep.step, err, stage)
	}
	if ep.greedy {
		if ep.tried == nil {
			ep.tried = map[string][]*eventspb.Action{}
		}
		ep.tried[state] = append(ep.tried[state], out.Action)
	}
	a := out.Action
	a.Envelope = eventspb.NewEnvelope(x.name)
	a.Envelope.EpisodeId, a.Envelope.Step, a.Envelope.Source = ep.id, ep.step, eventspb.Source_SOURCE_POLICY
	a.Greedy = ep.greedy
	a.ObsEventId = ep.obs.GetEnvelope().GetEventId()
	a.PolicyName = x.s.opts.policyName
	a.PolicyVersion = out.Version
	a.InferenceLatencyUs = uint64(max(out.InferenceMicros, 0))
	a.BatchSize = uint32(out.BatchSize)
	act, err := envAction(a, ep.scaleY, x.s.opts.noopWait)
	if err != nil {
		return nil, x.fail(ctx, ep.step, err, "action")
	}
	if out.DeadLetter != nil {
		x.deadLetter(out.DeadLetter)
	}
	if g := a.GetLm(); g != nil {
		x.countLM(g)
	}
	if err := x.s.pub.send(x.s.pub.actions, ep.id, a); err != nil {
		return nil, x.fail(ctx, ep.step, err, "publish")
	}
	x.s.c.batches.Add(1)
	x.s.c.batchSum.Add(uint64(out.BatchSize))
	x.s.c.inferenceUs.Add(uint64(max(out.InferenceMicros, 0)))
	x.s.m.batchSize.Observe(float64(out.BatchSize))
	x.s.m.inference.Observe(float64(out.InferenceMicros) / 1e6)
	x.ts.since(phThink, t0)
	return &decision{ev: a, act: act}, nil
}

// act executes a_t, waits for a stable s_t+1 (or the end) and publishes
// r_t. The reward goes out only once the next state is known, so that an
// episode that breaks in between is recorded as aborted at step t.
func (x *executor) act(ctx context.Context, d *decision) error {
	ep := x.ep
	t := ep.step
	t0 := time.Now()
	sctx, cancel := context.WithTimeout(ctx, x.s.opts.stepTimeout)
	res, err := x.e.Step(sctx, d.act)
	cancel()
	if err != nil {
		return x.fail(ctx, t, err, "step")
	}
	x.ts.add(phAct, res.Info.ActTime)
	x.ts.add(phWait, res.Obs.SettleWait)
	x.ts.add(phObserve, time.Since(t0)-res.Info.ActTime-res.Obs.SettleWait)
	x.aborts = 0
	x.s.c.steps.Add(1)
	x.s.m.steps.WithLabelValues(string(x.s.opts.mode)).Inc()
	x.ts.count(1, 0)

	ep.prevAction, ep.prevBid = d.ev.GetRaw(), d.ev.GetBid()
	ep.prev, ep.prevURL = d.ev, ep.obs.GetUrl()
	ep.history = append(ep.history, d.ev)
	ep.mem.Remember(t, d.ev, ep.obs, res.Reward)
	next, stable, done, err := x.settle(ctx, t+1, res.Obs, res.Done)
	if err != nil {
		return x.fail(ctx, t, err, "observe")
	}
	if !stable && !done {
		return x.abort(t, "unstable", fmt.Sprintf("the page did not settle after %s", d.ev.GetRaw()))
	}
	truncated := !done && t+1 >= ep.maxSteps
	r := x.reward(t, res, done, truncated)
	if err := x.s.pub.send(x.s.pub.rewards, ep.id, r); err != nil {
		return x.fail(ctx, t, err, "publish")
	}
	if ep.demo != nil && ep.demo.live != nil && !done && !truncated {
		// The solver goes on from what the step gave, while the executor
		// waits for its next action (demoDecide).
		ep.demo.live.result(ctx, res)
	}
	if done || truncated {
		result := "failure"
		switch {
		case r.GetSuccess():
			result = "success"
		case truncated:
			result = "truncated"
		}
		x.end(result)
		return nil
	}
	ep.step, ep.obs = t+1, next
	return nil
}

// reward builds r_t from a step result.
func (x *executor) reward(t uint32, res *env.StepResult, done, truncated bool) *eventspb.Reward {
	envl := eventspb.NewEnvelope(x.name)
	envl.EpisodeId, envl.Step, envl.Source = x.ep.id, t, x.ep.source()
	groups := map[string]bool{}
	for _, f := range res.Info.Facts {
		groups[f.Group] = true
	}
	reason := res.Info.Reason
	if res.Info.Error != "" {
		reason = clip("action failed: "+res.Info.Error, 500)
	}
	reward := res.Reward
	if truncated {
		reward += env.TruncationShaping(x.s.opts.shaping, res.Info)
	}
	return &eventspb.Reward{
		Envelope:   envl,
		Reward:     finite(reward),
		RawReward:  finite(res.Info.Raw),
		Done:       done || truncated,
		Success:    done && res.Info.Success,
		Truncated:  truncated,
		FactsMet:   webenv.GroupsMet(res.Info.Facts),
		FactsTotal: uint32(len(groups)),
		Reason:     reason,
		// MiniWoB++ figures are reported on both the raw reward (success
		// is raw > 0) and the time-decayed one; the page's own time limit
		// is a timeout, not a truncation by the step budget.
		DecayedReward: finite(res.Info.Decayed),
		TimedOut:      done && res.Info.TimedOut,
	}
}

func finite(v float64) float64 {
	if v != v || v > 1e300 || v < -1e300 {
		return 0
	}
	return v
}

// fail records the episode as aborted at step t because of err, and
// recovers the executor when the browser or the tab is at fault. A
// shutdown (ctx done) is recorded as such.
func (x *executor) fail(ctx context.Context, t uint32, err error, what string) error {
	if ctx.Err() != nil {
		return errors.Join(x.abort(t, "stopped", "actor stopped during "+what), ctx.Err())
	}
	reason := "error"
	if x.e != nil && x.browserGone() {
		reason = "crash"
	}
	// A page error (a task the server refuses) leaves the tab usable; a
	// dead tab or browser is replaced, and its episode is run again.
	lost := reason == "crash" || !x.tabAlive(ctx)
	x.s.log.Warn("episode aborted", "executor", x.idx, "episode", x.ep.id, "step", t, "during", what, "reason", reason, "err", err)
	task, attempt := x.ep.task, x.ep.attempt
	aerr := x.abort(t, reason, clip(what+": "+err.Error(), 500))
	if !lost {
		return aerr
	}
	x.retryLater(task, attempt)
	if rerr := x.recover(ctx, err); rerr != nil {
		return errors.Join(aerr, rerr)
	}
	return aerr
}

// countLM adds a language model's generation to the LM's cost metrics.
func (x *executor) countLM(g *eventspb.LMOutput) {
	x.s.c.lmPrompt.Add(uint64(g.GetPromptTokens()))
	x.s.c.lmOutput.Add(uint64(len(g.GetTokenLogprobs())))
	x.s.m.lmTokens.WithLabelValues("prompt").Add(float64(g.GetPromptTokens()))
	x.s.m.lmTokens.WithLabelValues("output").Add(float64(len(g.GetTokenLogprobs())))
	x.s.m.lmRequest.Observe(float64(g.GetLatencyMs()) / 1000)
	if g.GetInvalid() {
		x.s.c.lmInvalid.Add(1)
		x.s.m.lmInvalid.Inc()
	}
}

// deadLetter publishes dl (a policy backend's unusable reply) to the dlq
// topic under the executor's name, counted by its reason.
func (x *executor) deadLetter(dl *eventspb.DeadLetter) {
	dl.Envelope = eventspb.NewEnvelope(x.name)
	dl.Envelope.EpisodeId, dl.Envelope.Step = x.ep.id, x.ep.step
	x.s.c.deadLetters.Add(1)
	x.s.m.deadLetters.WithLabelValues(strings.ToLower(strings.TrimPrefix(dl.GetReasonCode().String(), "REASON_CODE_"))).Inc()
	if err := x.s.pub.send(x.s.pub.dlq, dl.GetSourceTopic(), dl); err != nil {
		x.s.log.Error("unable to dead-letter a model reply", "episode", x.ep.id, "err", err)
	}
}

// tabAlive reports whether the executor's tab still runs JavaScript.
func (x *executor) tabAlive(ctx context.Context) bool {
	if x.e == nil {
		return false
	}
	c, cancel := context.WithTimeout(x.e.TabContext(), 5*time.Second)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	v, err := chromedp.Run(c, chromedp.Evaluate[int]("1"))
	return err == nil && v == 1
}

// browserGone reports whether the executor's browser connection dropped or
// a newer generation replaced it.
func (x *executor) browserGone() bool {
	b, gen, err := x.s.pool.get(x.slot)
	if err != nil || gen != x.gen {
		return true
	}
	select {
	case <-b.Lost():
		return true
	default:
		return false
	}
}

// abort publishes the aborted reward of step t: done, never training data.
func (x *executor) abort(t uint32, reason, detail string) error {
	envl := eventspb.NewEnvelope(x.name)
	envl.EpisodeId, envl.Step, envl.Source = x.ep.id, t, x.ep.source()
	r := &eventspb.Reward{Envelope: envl, Done: true, Aborted: true, Reason: reason + ": " + detail}
	perr := x.s.pub.send(x.s.pub.rewards, x.ep.id, r)
	x.s.c.aborted.Add(1)
	x.s.m.aborted.WithLabelValues(reason).Inc()
	x.end("aborted")
	x.aborts++
	return errors.Join(errAborted, perr)
}

// end closes the episode's books.
func (x *executor) end(result string) {
	if x.ep != nil && x.ep.demo != nil && x.ep.demo.live != nil {
		x.ep.demo.live.stop()
	}
	x.s.c.episodes.Add(1)
	x.s.m.episodes.WithLabelValues(result).Inc()
	x.ts.count(0, 1)
	x.ep = nil
}

// pageState identifies what a page shows an agent, for greedy decoding's
// loop avoidance: the URL and every element's bid, role, text, value and
// checked and disabled states. Boxes and focus are left out: a late banner
// moves boxes and a click moves focus without changing what is done.
func pageState(o *eventspb.Observation) string {
	var b strings.Builder
	b.WriteString(o.GetUrl())
	for _, el := range o.GetElements() {
		b.WriteByte(0)
		b.WriteString(el.GetBid())
		b.WriteByte(1)
		b.WriteString(el.GetRole())
		b.WriteByte(1)
		b.WriteString(el.GetText())
		b.WriteByte(1)
		b.WriteString(el.GetValue())
		b.WriteByte(1)
		if el.GetChecked() {
			b.WriteByte('c')
		}
		if el.GetDisabled() {
			b.WriteByte('d')
		}
	}
	return b.String()
}
