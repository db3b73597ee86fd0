package reporter

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Reporter is the reporter target (app.Service): it follows the run's
// episodes, weights and actions, prints a progress line every interval and,
// when it stops, writes the run report.
type Reporter struct {
	factory *kafka.Factory
	catalog *topics.Catalog
	o       options
	log     *slog.Logger

	cl     *kgo.Client
	mu     sync.Mutex
	stats  *Stats
	cancel context.CancelFunc
	done   chan struct{}
	failed chan error
}

// Option configures a Reporter.
type Option func(*options)

type options struct {
	log   *slog.Logger
	out   io.Writer
	every time.Duration
	dir   string
	// window: the episodes per success rate (default 40).
	window   int
	policy   string
	groups   []string
	settings map[string]string
}

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithInterval sets the progress interval (default 15s).
func WithInterval(d time.Duration) Option { return func(o *options) { o.every = d } }

// WithRunDir writes the report to dir/runs/<start time>/ (default: .run).
func WithRunDir(dir string) Option { return func(o *options) { o.dir = dir } }

// WithPolicyName follows this policy's weights (default "default").
func WithPolicyName(n string) Option { return func(o *options) { o.policy = n } }

// WithLagGroups names the consumer groups whose lag is shown (default none).
func WithLagGroups(g ...string) Option { return func(o *options) { o.groups = g } }

// WithSettings lists the run's settings in the report (default none).
func WithSettings(m map[string]string) Option { return func(o *options) { o.settings = m } }

// New builds a reporter.
func New(f *kafka.Factory, cat *topics.Catalog, opts ...Option) (*Reporter, error) {
	o := options{log: slog.New(slog.NewTextHandler(io.Discard, nil)), out: os.Stdout, every: 15 * time.Second, dir: ".run", window: 40, policy: "default"}
	for _, opt := range opts {
		opt(&o)
	}
	if o.every <= 0 || o.window < 1 {
		return nil, fmt.Errorf("invalid reporter settings: interval %s, window %d", o.every, o.window)
	}
	return &Reporter{factory: f, catalog: cat, o: o, log: o.log.With("service", "reporter"), failed: make(chan error, 1)}, nil
}

// Name implements app.Service.
func (r *Reporter) Name() string { return "reporter" }

// Failed implements app.Failer: it yields when the reporter cannot read
// its topics for good (a fetch that retrying cannot fix).
func (r *Reporter) Failed() <-chan error { return r.failed }

// Start implements app.Service.
func (r *Reporter) Start(ctx context.Context) error {
	cl, err := r.factory.NewClient("reporter",
		kgo.ConsumeTopics(r.catalog.Name(topics.Episodes), r.catalog.Name(topics.Weights), r.catalog.Name(topics.Actions)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), // episodes come from the joiner's transactions
		kgo.FetchMaxBytes(80<<20), kgo.FetchMaxPartitionBytes(80<<20), kgo.BrokerMaxReadBytes(100<<20),
	)
	if err != nil {
		return err
	}
	r.cl = cl
	r.stats = NewStats(time.Now())
	runCtx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go func() {
		defer close(r.done)
		r.run(runCtx)
	}()
	return nil
}

func (r *Reporter) run(ctx context.Context) {
	tick := time.NewTicker(r.o.every)
	defer tick.Stop()
	polled := make(chan kgo.Fetches)
	go func() {
		defer close(polled)
		l := &kafka.Loop{Name: "reporter", Poller: r.cl, Max: 1000, Log: r.log,
			Handle: func(ctx context.Context, fs kgo.Fetches) error {
				select {
				case polled <- fs:
					return nil
				case <-ctx.Done():
					return kafka.ErrStop
				}
			}}
		if err := l.Run(ctx); err != nil {
			select {
			case r.failed <- fmt.Errorf("reporter stopped reading: %w", err):
			default:
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			for range polled { // let the poller exit
			}
			return
		case fs, ok := <-polled:
			if !ok {
				return
			}
			r.mu.Lock()
			fs.EachRecord(r.add)
			r.mu.Unlock()
		case <-tick.C:
			r.progress(ctx)
		}
	}
}

func (r *Reporter) add(rec *kgo.Record) {
	switch rec.Topic {
	case r.catalog.Name(topics.Episodes):
		if ep, err := eventspb.DecodeEpisode(rec.Value); err == nil {
			r.stats.AddEpisode(ep)
		}
	case r.catalog.Name(topics.Weights):
		if string(rec.Key) != r.o.policy || len(rec.Value) == 0 {
			return
		}
		if w, err := eventspb.DecodeWeights(rec.Value); err == nil {
			r.stats.AddWeights(w.GetVersion(), time.Unix(0, w.GetCreatedAtUnixNano()))
		}
	case r.catalog.Name(topics.Actions):
		if a, err := eventspb.DecodeAction(rec.Value); err == nil && a.GetPolicyName() == r.o.policy {
			r.stats.AddAction(a.GetEnvelope().GetProducer(), a.GetPolicyVersion(), time.Unix(0, a.GetEnvelope().GetProducedAtUnixNano()))
			if g := a.GetLm(); g != nil {
				r.stats.AddLM(g)
			}
		}
	}
}

// progress prints one line: throughput, success by tier, version, lag.
func (r *Reporter) progress(ctx context.Context) {
	now := time.Now()
	r.mu.Lock()
	s := r.stats
	elapsed := now.Sub(s.start)
	n := s.Episodes()
	var parts []string
	for _, tier := range []eventspb.Tier{eventspb.Tier_TIER_EASY, eventspb.Tier_TIER_MEDIUM, eventspb.Tier_TIER_HARD} {
		test := s.Recent(tier, true, r.o.window, now)
		train := s.Recent(tier, false, r.o.window, now)
		if test.N+train.N == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s held-out %s train %s", tierName(tier), pct(test), pct(train)))
	}
	version := s.newest
	if l := s.LM().Line(elapsed); l != "" {
		parts = append(parts, l)
	}
	r.mu.Unlock()
	line := fmt.Sprintf("[%s] episodes %d (%.2f/s) | %s | policy v%d | lag %s",
		elapsed.Round(time.Second), n, float64(n)/max(elapsed.Seconds(), 1), strings.Join(parts, " | "), version, r.lag(ctx))
	// A broker outage says so on the line: the counts above stand still
	// until it ends, and the next line without this part is its end.
	if down := kafka.Reach.Down(3 * time.Second); down != "" {
		line += " | OUTAGE: " + down
	}
	fmt.Fprintln(r.o.out, line)
}

func (r *Reporter) lag(ctx context.Context) string {
	if len(r.o.groups) == 0 {
		return "-"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	lags, err := kadm.NewClient(r.cl).Lag(ctx, r.o.groups...)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	var out []string
	for _, g := range r.o.groups {
		l, ok := lags[g]
		if !ok || l.FetchErr != nil || l.DescribeErr != nil {
			out = append(out, g+"=?")
			continue
		}
		out = append(out, fmt.Sprintf("%s=%d", strings.TrimPrefix(g, r.catalog.Prefix), l.Lag.Total()))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// Stop implements app.Service: the last records are taken in, then the
// report is written.
func (r *Reporter) Stop(ctx context.Context) error {
	if r.cancel == nil {
		return nil
	}
	// Read what is already in the topics (the learner's final version and
	// the last episodes) before writing.
	r.drain(ctx, 2*time.Second)
	r.cancel()
	select {
	case <-r.done:
	case <-ctx.Done():
	}
	r.cl.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	dir := filepath.Join(r.o.dir, "runs", r.stats.start.UTC().Format("20060102-150405"))
	paths, err := WriteReport(dir, r.stats, time.Now(), r.o.window, r.o.settings)
	if err != nil {
		return err
	}
	r.log.Info("run report written", "report", paths[0], "curve", paths[1])
	fmt.Fprintf(r.o.out, "report: %s\ncurve:  %s\n", paths[0], paths[1])
	return nil
}

// drain waits up to d for the consumer to catch up with what is buffered.
func (r *Reporter) drain(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func tierName(t eventspb.Tier) string {
	return strings.ToLower(strings.TrimPrefix(t.String(), "TIER_"))
}

func pct(r Rate) string {
	if r.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% (%d)", 100*r.Value(), r.N)
}

func fmtRate(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}
