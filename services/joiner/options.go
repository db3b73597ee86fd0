package joiner

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Option configures a Service.
type Option func(*Service)

// WithSettings sets the join settings (default DefaultSettings: a 30s late
// window, no staleness bound).
func WithSettings(s Settings) Option { return func(sv *Service) { sv.set = s } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(sv *Service) { sv.log = l } }

// WithMetrics registers the service's metrics on reg (default: a private
// registry nobody scrapes).
func WithMetrics(reg prometheus.Registerer) Option { return func(sv *Service) { sv.reg = reg } }

// WithGroup sets the consumer group (default: the catalog prefix + "joiner").
func WithGroup(g string) Option { return func(sv *Service) { sv.group = g } }

// WithInstanceID names this member; its transactional id is group + "/" +
// instance, so it must be unique among running members and stable across
// restarts of the same member (default "joiner").
func WithInstanceID(id string) Option { return func(sv *Service) { sv.instance = id } }

// WithMaxBatch bounds the records of one transaction (default 10000).
func WithMaxBatch(n int) Option { return func(sv *Service) { sv.maxBatch = n } }

// WithSessionTimeout sets the group session timeout: how long a member that
// died without leaving keeps its partitions (default 10s).
func WithSessionTimeout(d time.Duration) Option { return func(sv *Service) { sv.sessionTimeout = d } }

// WithTransactionTimeout sets how long the broker lets a transaction of a
// dead member stay open before aborting it; the new owner of its partitions
// waits that long at most (default 15s).
func WithTransactionTimeout(d time.Duration) Option {
	return func(sv *Service) { sv.txnTimeout = d }
}

// WithStallTimeout sets how long the member may go without committing while
// its input has records waiting before it ends its Kafka session and builds
// a new one (default 60s; 0 turns the watchdog off). It catches sessions
// that franz-go keeps retrying after a broker loss without progress.
func WithStallTimeout(d time.Duration) Option { return func(sv *Service) { sv.stallTimeout = d } }
