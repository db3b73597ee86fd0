package recorder

import (
	"log/slog"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultFrameSample is WithFrameSample's default: the frames of one in 20
// training episodes are kept.
const DefaultFrameSample = 20

type options struct {
	group         string
	batchRecords  int
	linger        time.Duration
	lagInterval   time.Duration
	backoffMin    time.Duration
	backoffMax    time.Duration
	insertTimeout time.Duration
	session       time.Duration
	// decoders: how many goroutines decode a large poll (default
	// GOMAXPROCS, at most 4): decoding is the recorder's main CPU cost.
	decoders    int
	instance    string
	frameSample int
	log         *slog.Logger
	reg         prometheus.Registerer
}

// Option changes a Recorder.
type Option func(*options)

// WithGroup sets the consumer group (default: the catalog prefix + "recorder").
func WithGroup(g string) Option { return func(o *options) { o.group = g } }

// WithBatchRecords sets how many records a batch holds at most before it is
// inserted (default 50,000; below ClickHouse's 1,048,576-row insert block, so
// one table's INSERT stays one atomic part).
func WithBatchRecords(n int) Option { return func(o *options) { o.batchRecords = n } }

// WithLinger sets how long a batch may wait to fill before it is inserted
// anyway (default 5s): the bound on how stale ClickHouse is. Each INSERT
// makes a part in every table it touches and in their views' targets, and
// ClickHouse merges each new part into the table's: at 500ms a MiniWoB++
// training run made about 10 INSERTs a second, ClickHouse merged 92,000
// rows a second for 120 inserted, and took 37% of one of the machine's
// two cores from the browsers.
func WithLinger(d time.Duration) Option { return func(o *options) { o.linger = d } }

// WithLagInterval sets how often consumer lag is snapshotted into
// consumer_lag (default 15s; 0 turns snapshots off).
func WithLagInterval(d time.Duration) Option { return func(o *options) { o.lagInterval = d } }

// WithBackoff sets the first and the longest wait between INSERT retries
// while ClickHouse is failing (default 100ms doubling up to 5s).
func WithBackoff(minWait, maxWait time.Duration) Option {
	return func(o *options) { o.backoffMin, o.backoffMax = minWait, maxWait }
}

// WithInsertTimeout bounds one INSERT attempt (default 2m), so a server that
// hangs instead of failing is retried too.
func WithInsertTimeout(d time.Duration) Option { return func(o *options) { o.insertTimeout = d } }

// WithSessionTimeout sets the group session timeout (default 0: franz-go's
// 45s): how long the partitions of a recorder that died without leaving the
// group wait before they move to a live member.
func WithSessionTimeout(d time.Duration) Option { return func(o *options) { o.session = d } }

// WithInstance names this process in consumer_lag.taken_by (default "recorder").
func WithInstance(id string) Option { return func(o *options) { o.instance = id } }

// WithFrameSample sets which frames go to the frames table: every frame of
// a greedy (evaluation) episode, and those of one in n of the other
// episodes, chosen by a hash of the episode id (default 20; 0: greedy
// episodes only; negative: no frames).
func WithFrameSample(n int) Option { return func(o *options) { o.frameSample = n } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithRegisterer registers the recorder's metrics (default: not registered).
func WithRegisterer(r prometheus.Registerer) Option { return func(o *options) { o.reg = r } }

func defaults() options {
	return options{
		batchRecords:  50_000,
		linger:        5 * time.Second,
		lagInterval:   15 * time.Second,
		backoffMin:    100 * time.Millisecond,
		backoffMax:    5 * time.Second,
		insertTimeout: 2 * time.Minute,
		instance:      "recorder",
		frameSample:   DefaultFrameSample,
		decoders:      min(4, runtime.GOMAXPROCS(0)),
		log:           slog.New(slog.DiscardHandler),
	}
}
