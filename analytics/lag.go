package analytics

import (
	"context"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// LagRow is one consumer group's position on one partition at one moment.
type LagRow struct {
	TakenAt   time.Time
	Group     string
	Topic     string
	Partition int32
	MemberID  string // empty when no member owns the partition
	ClientID  string
	Committed int64 // -1 when the group never committed on the partition
	End       int64 // log end offset
	Lag       int64
	TakenBy   string // instance that took the snapshot
	Run       string // the run (topic prefix) of the recorder that took it
}

// InsertLag writes one snapshot's rows into database.consumer_lag.
func InsertLag(ctx context.Context, conn driver.Conn, database string, rows []LagRow) error {
	b := &Block{table: TableConsumerLag}
	takenAt := newCol[int64](b, "taken_at")
	takenAtNs := newCol[int64](b, "taken_at_ns")
	group := newStrCol(b, "group_id")
	topic := newStrCol(b, "topic")
	partition := newCol[int32](b, "partition")
	member := newStrCol(b, "member_id")
	client := newStrCol(b, "client_id")
	committed := newCol[int64](b, "committed_offset")
	end := newCol[int64](b, "end_offset")
	lag := newCol[int64](b, "lag")
	takenBy := newStrCol(b, "taken_by")
	run := newStrCol(b, "run")
	for _, r := range rows {
		takenAt.add(timeSeconds(r.TakenAt))
		takenAtNs.add(r.TakenAt.UnixNano())
		group.add(r.Group)
		topic.add(r.Topic)
		partition.add(r.Partition)
		member.add(r.MemberID)
		client.add(r.ClientID)
		committed.add(r.Committed)
		end.add(r.End)
		lag.add(r.Lag)
		takenBy.add(r.TakenBy)
		run.add(r.Run)
		b.rows++
	}
	return b.Insert(ctx, conn, database)
}
