package kafka

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// LagCollector exports the consumer lag of this process's groups on
// /metrics, read from Kafka at each scrape (kadm: the group's committed
// offsets against the partitions' end offsets, what kafka-consumer-groups
// --describe shows):
//
//	asyncwebrl_consumer_lag{group,topic,partition}              end − committed
//	asyncwebrl_consumer_committed_offset{group,topic,partition}
//	asyncwebrl_partition_end_offset{group,topic,partition}
//
// A partition the group has not committed on has no committed offset and
// its lag counts from the log start. A scrape that cannot reach Kafka
// within its timeout exports no lag (Prometheus marks the series stale)
// and counts the failure in asyncwebrl_consumer_lag_errors_total.
type LagCollector struct {
	newClient ClientFunc
	groups    []string
	timeout   time.Duration
	log       *slog.Logger

	lag, committed, end *prometheus.Desc
	errors              prometheus.Counter

	mu sync.Mutex
	cl *kgo.Client
}

// NewLagCollector returns a collector of groups' lag; the client it builds
// on the first scrape lives as long as the process (Close ends it).
func NewLagCollector(newClient ClientFunc, log *slog.Logger, groups ...string) *LagCollector {
	labels := []string{"group", "topic", "partition"}
	return &LagCollector{
		newClient: newClient, groups: groups, timeout: 5 * time.Second, log: log,
		lag:       prometheus.NewDesc("asyncwebrl_consumer_lag", "Records a consumer group is behind on a partition: end offset minus committed offset (from the log start without a commit).", labels, nil),
		committed: prometheus.NewDesc("asyncwebrl_consumer_committed_offset", "The group's committed offset on a partition (absent without a commit).", labels, nil),
		end:       prometheus.NewDesc("asyncwebrl_partition_end_offset", "The partition's end offset, as the lag is computed against it.", labels, nil),
		errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "asyncwebrl_consumer_lag_errors_total",
			Help: "Scrapes whose consumer lag could not be read from Kafka."}),
	}
}

// Describe implements prometheus.Collector.
func (c *LagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lag
	ch <- c.committed
	ch <- c.end
	c.errors.Describe(ch)
}

// Collect implements prometheus.Collector: one read of the groups' lag.
func (c *LagCollector) Collect(ch chan<- prometheus.Metric) {
	defer c.errors.Collect(ch)
	lags, err := c.read()
	if err != nil {
		c.errors.Inc()
		c.log.Debug("unable to read consumer lag for /metrics", "groups", c.groups, "err", err)
		return
	}
	for _, g := range lags.Sorted() {
		if g.Error() != nil {
			continue
		}
		for _, l := range g.Lag.Sorted() {
			if l.Err != nil {
				continue
			}
			lv := []string{g.Group, l.Topic, strconv.Itoa(int(l.Partition))}
			ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(max(l.Lag, 0)), lv...)
			ch <- prometheus.MustNewConstMetric(c.end, prometheus.GaugeValue, float64(l.End.Offset), lv...)
			if l.Commit.At >= 0 {
				ch <- prometheus.MustNewConstMetric(c.committed, prometheus.GaugeValue, float64(l.Commit.At), lv...)
			}
		}
	}
}

func (c *LagCollector) read() (kadm.DescribedGroupLags, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cl == nil {
		cl, err := c.newClient()
		if err != nil {
			return nil, err
		}
		c.cl = cl
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	return kadm.NewClient(c.cl).Lag(ctx, c.groups...)
}

// Close closes the collector's client.
func (c *LagCollector) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cl != nil {
		c.cl.Close()
		c.cl = nil
	}
}
