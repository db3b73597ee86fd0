package recorder

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
)

// snapshotLag writes every consumer group's lag on the catalog's topics to
// consumer_lag every lagInterval. A snapshot that fails (Kafka or ClickHouse
// unavailable) is skipped: snapshots are samples, the next one follows.
func (r *Recorder) snapshotLag(ctx context.Context) {
	defer close(r.lagDone)
	if r.o.lagInterval <= 0 {
		return
	}
	app.Every(ctx, r.o.lagInterval, func(ctx context.Context) {
		n, err := r.takeLagSnapshot(ctx)
		if err != nil {
			r.m.lagSnapshots.WithLabelValues("error").Inc()
			if ctx.Err() == nil {
				r.o.log.Warn("consumer lag snapshot skipped", "err", err)
			}
			return
		}
		r.m.lagSnapshots.WithLabelValues("ok").Inc()
		r.o.log.Debug("consumer lag snapshot", "rows", n)
	})
}

// takeLagSnapshot lists the cluster's groups, computes their lag (kadm) and
// keeps the partitions of this catalog's topics, including the joiner's
// changelog and every other group consuming them.
func (r *Recorder) takeLagSnapshot(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(r.cl)
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return 0, err
	}
	lags, err := adm.Lag(ctx, listed.Groups()...)
	if err != nil {
		return 0, err
	}
	ours := map[string]bool{}
	for _, n := range r.catalog.Names() {
		ours[n] = true
	}
	now := time.Now()
	var rows []analytics.LagRow
	for _, g := range lags.Sorted() {
		if g.Error() != nil {
			continue
		}
		for _, l := range g.Lag.Sorted() {
			if !ours[l.Topic] || l.Err != nil {
				continue
			}
			row := analytics.LagRow{TakenAt: now, Group: g.Group, Topic: l.Topic, Partition: l.Partition,
				Committed: l.Commit.At, End: l.End.Offset, Lag: l.Lag, TakenBy: r.o.instance, Run: r.catalog.Prefix}
			if l.Member != nil {
				row.MemberID, row.ClientID = l.Member.MemberID, l.Member.ClientID
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return 0, nil
	}
	return len(rows), analytics.InsertLag(ctx, r.conn, r.ch.Database, rows)
}
