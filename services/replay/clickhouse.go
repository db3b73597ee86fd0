package replay

import (
	"context"
	"fmt"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// ClickHouseSource reads the joiner's inputs back from the recorder's
// event_log archive: the history beyond Kafka's retention. Bounds are
// times (or start/end); an offset bound other than 0 applies per
// topic-partition as in Kafka.
type ClickHouseSource struct {
	Conn     driver.Conn
	Database string
	Catalog  *topics.Catalog
	From, To Bound
}

// Records implements Source, one topic-partition after another, each in
// offset order (FINAL folds records the recorder stored twice).
func (c *ClickHouseSource) Records(ctx context.Context, fn func(joiner.Record) error) error {
	kinds := inputs(c.Catalog)
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, "'"+strings.ReplaceAll(n, "'", "")+"'")
	}
	where := []string{"topic IN (" + strings.Join(names, ", ") + ")"}
	switch {
	case c.From.Offset > 0:
		where = append(where, fmt.Sprintf("offset >= %d", c.From.Offset))
	case c.From.Offset < 0 && !c.From.End:
		where = append(where, fmt.Sprintf("kafka_timestamp_ns >= %d", c.From.Time.UnixNano()))
	}
	switch {
	case c.To.End:
	case c.To.Offset >= 0:
		where = append(where, fmt.Sprintf("offset < %d", c.To.Offset))
	default:
		where = append(where, fmt.Sprintf("kafka_timestamp_ns < %d", c.To.Time.UnixNano()))
	}
	q := fmt.Sprintf("SELECT topic, partition, offset, key, value, kafka_timestamp_ns FROM %s.%s FINAL WHERE %s ORDER BY topic, partition, offset",
		c.Database, analytics.TableEventLog, strings.Join(where, " AND "))
	rows, err := c.Conn.Query(ctx, q)
	if err != nil {
		return fmt.Errorf("unable to read the event log: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			topic, key, value string
			partition         int32
			offset, ts        int64
		)
		if err := rows.Scan(&topic, &partition, &offset, &key, &value, &ts); err != nil {
			return fmt.Errorf("unable to read the event log: %w", err)
		}
		rec := joiner.Record{Kind: kinds[topic], Value: []byte(value), Source: joiner.Source{
			Topic: topic, Partition: partition, Offset: offset, Key: []byte(key), Timestamp: ts,
		}}
		if err := fn(rec); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("unable to read the event log: %w", err)
	}
	return nil
}
