package actor

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// Mode is how executors are scheduled.
type Mode string

const (
	// ModeAsync lets every executor run on its own: it acts, waits for its
	// own page and asks for inference while the others do the same.
	ModeAsync Mode = "async"
	// ModeSync is the strict synchronous baseline of synchronous RL
	// rollouts: batches of episodes, one per executor, that start together
	// and advance in lock-step rounds (every executor observes, one batched
	// inference decides for all, all act, a barrier waits for every page
	// to settle); an executor whose episode ended waits for the batch's
	// longest episode before the next batch starts.
	ModeSync Mode = "sync"
	// ModeSyncStep is the other lock-step baseline: the same rounds, but an
	// executor whose episode ended starts its next one in the next round,
	// so only the slowest page of each round is waited for, not the
	// longest episode.
	ModeSyncStep Mode = "sync-step"
	// ModeRaw is no RL at all, the floor a step costs on these browsers:
	// each executor opens its first task once, then only clicks the middle
	// of its tab and takes a screenshot, again and again (no settling, no
	// DOM read, no inference, no events). Only bench rollout uses it.
	ModeRaw Mode = "raw"
)

// Option configures a Service.
type Option func(*options)

type options struct {
	// requestPerAction: WithRequestPerAction.
	requestPerAction bool
	// miniwobTimeLimit: WithMiniWoBTimeLimit.
	miniwobTimeLimit time.Duration
	executors        int
	browsers         int
	mode             Mode
	webenvURL        string
	allowed          []string
	settler          env.Settler
	frameMaxSide     int
	frameFormat      string
	jpegQuality      int
	frameStore       string
	maxSteps         int
	// resettles: how many more times an executor waits for a page that
	// did not settle before it aborts the episode (default 2).
	resettles int
	// crashRetries: WithCrashRetries.
	crashRetries int
	// memorySteps: the past steps an observation remembers.
	memorySteps int
	taskGrace   time.Duration
	// taskPause: how long executors wait for the next assignment once
	// the tasks topic has delivered one, before the local generator supplies
	// tasks (default 30s, never less than the task grace): a scheduler that
	// holds assignments back for its learner's staleness bound is paused, not
	// gone.
	taskPause time.Duration
	taskGroup string
	families  []string
	onPolicy  bool
	// firstSeed: the local generator's first seed (default 0).
	firstSeed  int64
	policyName string
	// policyOpts: options of the batching inference server
	// (default: its own, max batch 32 and max wait 2ms).
	policyOpts  []policy.Option
	initialONNX []byte
	newPolicy   func(weights []byte, version uint64) (Policy, error)
	// weightsCatchUp: the bound on the start-up read of the weights topic for the
	// latest version (default 15s).
	weightsCatchUp time.Duration
	shaping        webenv.Shaping
	browserNice    int
	telemetryEvery time.Duration
	// noopWait: how long a NOOP action waits before the page is settled
	// again (default 0: NOOP means "wait for the page", the settler does that).
	noopWait    time.Duration
	browserOpts []env.BrowserOption
	// unpaced: keep env.LaunchBrowser's --disable-frame-rate-limit
	// and --disable-gpu-vsync (default off: the actor restores frame pacing).
	// Unpaced frames let a screenshot skip the wait for the next frame, which
	// matters above ~12 steps/s per tab; the actor's tabs step a few times a
	// second, and unpaced, every page with anything to redraw (a spinner, a
	// hover, a caret) draws as fast as the CPU allows: measured on 2 cores with
	// the web profile, 8 async executors made 17 steps/s unpaced and 20 paced,
	// and the sync baseline used 76% of the CPU unpaced against 48% paced.
	unpaced bool
	// stepTimeout: the bound on one reset or step including its settling (default
	// 60s); a step that takes longer aborts its episode.
	stepTimeout time.Duration
	sampleSeed  uint64
	log         *slog.Logger
	reg         prometheus.Registerer
	instance    string
}

func defaultOptions() options {
	return options{
		executors:      4,
		mode:           ModeAsync,
		browserNice:    10,
		frameMaxSide:   128,
		frameFormat:    "jpeg",
		jpegQuality:    80,
		maxSteps:       12,
		resettles:      2,
		crashRetries:   2,
		memorySteps:    DefaultMemorySteps,
		taskGrace:      3 * time.Second,
		taskPause:      30 * time.Second,
		policyName:     "default",
		weightsCatchUp: 15 * time.Second,
		telemetryEvery: 10 * time.Second,
		stepTimeout:    60 * time.Second,
		sampleSeed:     uint64(time.Now().UnixNano()),
		log:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		reg:            prometheus.NewRegistry(),
		instance:       "actor",
	}
}

// WithExecutors sets the number of executors, one isolated browser context
// each (default 4).
func WithExecutors(n int) Option { return func(o *options) { o.executors = n } }

// WithBrowsers sets the number of Chromium processes the executors are
// spread over, round robin (default: one per 4 executors).
func WithBrowsers(n int) Option { return func(o *options) { o.browsers = n } }

// WithMode sets the scheduling mode (default ModeAsync).
func WithMode(m Mode) Option { return func(o *options) { o.mode = m } }

// WithWebenvURL sets the task server's base URL (default: config.WebenvURL).
func WithWebenvURL(u string) Option { return func(o *options) { o.webenvURL = u } }

// WithAllowedOrigins sets the origins (scheme://host:port) tabs may load
// anything from; every other request is failed in the browser and counted
// (default: the webenv origin only).
func WithAllowedOrigins(origins ...string) Option {
	return func(o *options) { o.allowed = append([]string(nil), origins...) }
}

// WithSettler sets the stability detector (default: Visual's defaults).
func WithSettler(s env.Settler) Option { return func(o *options) { o.settler = s } }

// WithFrameMaxSide sets the wire frame's size: the screenshot is scaled so
// that its longer side is at most n pixels, never up (default 128).
func WithFrameMaxSide(n int) Option { return func(o *options) { o.frameMaxSide = n } }

// WithFrameFormat sets the frame compression, "jpeg" or "png" (default
// "jpeg").
func WithFrameFormat(f string) Option { return func(o *options) { o.frameFormat = f } }

// WithJPEGQuality sets the JPEG quality of frames, 1..100 (default 80).
func WithJPEGQuality(q int) Option { return func(o *options) { o.jpegQuality = q } }

// WithFrameStore keeps every full-resolution screenshot in a content-
// addressed store under dir (<dir>/<sha256>), and observations carry only
// the hash (default "": not kept). The binary uses RunDir/frames.
func WithFrameStore(dir string) Option { return func(o *options) { o.frameStore = dir } }

// WithMemorySteps sets how many past steps each observation remembers,
// newest first, with the text of up to two earlier pages (default
// DefaultMemorySteps, 4; 0 turns the memory off).
func WithMemorySteps(k int) Option { return func(o *options) { o.memorySteps = k } }

// WithMaxSteps sets the step budget of tasks that give none (default 12);
// an episode that reaches it is truncated.
func WithMaxSteps(n int) Option { return func(o *options) { o.maxSteps = n } }

// WithTaskGrace sets how long executors wait for a task from the tasks topic
// before the local generator supplies one (default 3s).
func WithTaskGrace(d time.Duration) Option { return func(o *options) { o.taskGrace = d } }

// WithTaskGroup sets the tasks consumer group (default: topic prefix +
// "actor").
func WithTaskGroup(g string) Option { return func(o *options) { o.taskGroup = g } }

// WithFamilies restricts the local task generator to these families, of
// any suite (default: every built-in family, on its train sites).
func WithFamilies(names ...string) Option {
	return func(o *options) { o.families = append([]string(nil), names...) }
}

// WithSuite makes the local task generator draw from a suite's tasks the
// action space can express (default builtin; catalog.Schedulable), unless
// WithFamilies names them. MiniWoB++ tasks get train seeds only
// (catalog.MiniWoBSeed): the generator's episodes are training data.
func WithSuite(s catalog.Suite) Option {
	return func(o *options) {
		if len(o.families) > 0 || !s.HasMiniWoB() {
			return
		}
		for _, f := range catalog.Schedulable(s) {
			o.families = append(o.families, f.Name)
		}
	}
}

// WithOnPolicy makes ModeSync the classic on-policy RL loop (default off:
// the rollout baseline, whose batches never wait for a learner): a batch of
// episodes is acted with one policy version v, and the next batch starts
// only once a version newer than v has been published (the learner trained
// on the batch, learner.WithSyncBatches), so no batch ever acts with stale
// weights and the executors idle while the learner trains. Other modes
// ignore it.
func WithOnPolicy(on bool) Option { return func(o *options) { o.onPolicy = on } }

// WithPolicyName sets the policy acted with: the key of the weights topic
// (default "default").
func WithPolicyName(n string) Option { return func(o *options) { o.policyName = n } }

// WithPolicy sets the backend that decides the executors' actions, built
// from the weights the actor starts on (default: the ONNX network in the
// batching inference server, with WithPolicyOptions). Later versions reach
// it through Policy.Swap.
func WithPolicy(newPolicy func(weights []byte, version uint64) (Policy, error)) Option {
	return func(o *options) { o.newPolicy = newPolicy }
}

// WithInitialONNX sets the model used when no weights are published
// (default policy.InitialONNX of the default architecture, version 0).
func WithInitialONNX(b []byte) Option { return func(o *options) { o.initialONNX = b } }

// WithTelemetryWindow sets the window of each executor's telemetry event
// (default 10s).
func WithTelemetryWindow(d time.Duration) Option { return func(o *options) { o.telemetryEvery = d } }

// WithBrowserOptions adds options to every Chromium launch (default none).
func WithBrowserOptions(opts ...env.BrowserOption) Option {
	return func(o *options) { o.browserOpts = append(o.browserOpts, opts...) }
}

// WithSampleSeed seeds the executors' action sampling (default: the clock).
func WithSampleSeed(s uint64) Option { return func(o *options) { o.sampleSeed = s } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithMetrics registers the actor's metrics on reg (default: a private
// registry nobody scrapes).
func WithMetrics(reg prometheus.Registerer) Option { return func(o *options) { o.reg = reg } }

// WithInstanceID names this actor in events (producer, actor_id) (default
// "actor").
func WithInstanceID(id string) Option { return func(o *options) { o.instance = id } }

// validate checks the knobs that only code sets. The ones a user sets
// (executors, browsers, mode, browser nice, policy name) are checked where
// they are read, in config.Actor, and nowhere else.
func (o *options) validate() error {
	switch {
	case o.frameMaxSide < 8 || o.frameMaxSide > 4096:
		return fmt.Errorf("invalid frame size %d: want 8..4096", o.frameMaxSide)
	case o.frameFormat != "jpeg" && o.frameFormat != "png":
		return fmt.Errorf("invalid frame format %q: want jpeg or png", o.frameFormat)
	case o.jpegQuality < 1 || o.jpegQuality > 100:
		return fmt.Errorf("invalid JPEG quality %d: want 1..100", o.jpegQuality)
	case o.maxSteps < 1:
		return fmt.Errorf("invalid max steps %d: must be positive", o.maxSteps)
	case o.telemetryEvery <= 0:
		return fmt.Errorf("invalid telemetry window %s: must be positive", o.telemetryEvery)
	}
	return nil
}

// WithShaping adds webenv's dense shaping terms to every step's reward
// (default none: 1 on success, else 0; the raw reward is always in
// raw_reward).
func WithShaping(sh webenv.Shaping) Option { return func(o *options) { o.shaping = sh } }

// WithBrowserNice runs every Chromium thread at this nice value, re-imposed
// at each health check (default 10: browsers use the CPU the learner and
// joiner leave; 0 keeps Chromium's own priorities, which raise its
// compositor threads above every other process).
func WithBrowserNice(n int) Option { return func(o *options) { o.browserNice = n } }

// WithCrashRetries runs the task of an episode a crashed browser or a lost
// tab cut short again, on the fresh tab, up to n times before it is given
// up (default 2; 0 drops such episodes, as before 12-05). Each attempt is an
// episode of its own (retry.go).
func WithCrashRetries(n int) Option { return func(o *options) { o.crashRetries = max(n, 0) } }

// WithRequestPerAction makes each reset and action on a MiniWoB++ page wait
// for one request to the task server, which its latency profile delays
// (env.WithRequestPerAction; default off; the command line turns it on when
// -latency-profile delays requests).
func WithRequestPerAction(on bool) Option { return func(o *options) { o.requestPerAction = on } }

// WithMiniWoBTimeLimit sets every MiniWoB++ episode's time limit
// (env.WithMiniWoBTimeLimit; default 0: the page's own).
func WithMiniWoBTimeLimit(d time.Duration) Option { return func(o *options) { o.miniwobTimeLimit = d } }
