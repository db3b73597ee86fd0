package loadtest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TopicAudit compares one topic with its ClickHouse table.
type TopicAudit struct {
	Topic string // catalog name
	Table string
	// Committed is the distinct events the topic holds committed
	// (undecodable records count once each, by partition and offset, as
	// bad_records keeps them).
	Committed int
	// Recorded is how many of them ClickHouse holds.
	Recorded int
	// Aborted is the distinct events only aborted transactions hold, and
	// AbortedRecorded how many of those reached ClickHouse (must be 0).
	Aborted         int
	AbortedRecorded int
	// Distinct is every distinct event the table holds (and bad_records
	// for the topic), whichever run wrote it: beyond Recorded, what the
	// topic does not hold committed.
	Distinct int
	// Missing names a few committed events ClickHouse lacks.
	Missing []string
}

// OK: every committed event is recorded and nothing aborted is.
func (a TopicAudit) OK() bool { return a.Recorded == a.Committed && a.AbortedRecorded == 0 }

// Audit is the comparison of every recorded topic of a catalog with the
// recorder's ClickHouse database.
type Audit []TopicAudit

// OK: every topic is.
func (a Audit) OK() bool {
	for _, t := range a {
		if !t.OK() {
			return false
		}
	}
	return true
}

// String is a table: topic, committed, in ClickHouse, missing, aborted,
// aborted in ClickHouse.
func (a Audit) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "topic\tcommitted\tin ClickHouse\tmissing\taborted\taborted in ClickHouse\t")
	for _, t := range a {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t\n", t.Topic, t.Committed, t.Recorded, t.Committed-t.Recorded, t.Aborted, t.AbortedRecorded)
	}
	_ = w.Flush()
	return b.String()
}

// badKey names an undecodable record the way bad_records keys it.
func badKey(partition int32, offset int64) string { return fmt.Sprintf("bad:%d@%d", partition, offset) }

// AuditRecorder reads every topic the recorder records, committed and
// uncommitted, and checks each committed event against its ClickHouse
// table in database db (and bad_records for undecodable records): the
// recorder's contract is that ClickHouse holds exactly what happened. Run it
// once the recorder has caught up. ClickHouse may hold other runs' rows
// (other prefixes); they are not looked at.
func AuditRecorder(ctx context.Context, newClient joiner.ClientFunc, cat *topics.Catalog, conn driver.Conn, db string) (Audit, error) {
	var out Audit
	for _, topic := range slices.Sorted(maps.Keys(analytics.EventTables)) {
		a, err := auditTopic(ctx, newClient, cat, conn, db, topic)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func auditTopic(ctx context.Context, newClient joiner.ClientFunc, cat *topics.Catalog, conn driver.Conn, db, topic string) (TopicAudit, error) {
	name := cat.Name(topic)
	a := TopicAudit{Topic: topic, Table: analytics.EventTables[topic]}
	key := func(r *kgo.Record) string {
		id, err := analytics.EventID(topic, r.Value)
		if err != nil || id == "" {
			return badKey(r.Partition, r.Offset)
		}
		return id
	}
	committed, all := map[string]bool{}, map[string]bool{}
	if err := joiner.ReadCommitted(ctx, newClient, name, nil, func(r *kgo.Record) error {
		committed[key(r)] = true
		return nil
	}); err != nil {
		return a, err
	}
	if err := joiner.ReadUncommitted(ctx, newClient, name, nil, func(r *kgo.Record) error {
		all[key(r)] = true
		return nil
	}); err != nil {
		return a, err
	}
	aborted := map[string]bool{}
	for k := range all {
		if !committed[k] {
			aborted[k] = true
		}
	}
	a.Committed, a.Aborted = len(committed), len(aborted)
	found, err := recorded(ctx, conn, db, a.Table, name, committed)
	if err != nil {
		return a, err
	}
	a.Recorded = len(found)
	for _, k := range slices.Sorted(maps.Keys(committed)) {
		if !found[k] && len(a.Missing) < 10 {
			a.Missing = append(a.Missing, k)
		}
	}
	abortedFound, err := recorded(ctx, conn, db, a.Table, name, aborted)
	if err != nil {
		return a, err
	}
	a.AbortedRecorded = len(abortedFound)
	if a.Distinct, err = distinct(ctx, conn, db, a.Table, name); err != nil {
		return a, err
	}
	return a, nil
}

// distinct counts the table's distinct event ids and the topic's distinct
// undecodable records.
func distinct(ctx context.Context, conn driver.Conn, db, table, topic string) (int, error) {
	var events, bad uint64
	if err := conn.QueryRow(ctx, "SELECT uniqExact(event_id) FROM "+db+"."+table).Scan(&events); err != nil {
		return 0, fmt.Errorf("unable to count %s.%s: %w", db, table, err)
	}
	if err := conn.QueryRow(ctx, "SELECT uniqExact(partition, offset) FROM "+db+".bad_records WHERE topic = ?", topic).Scan(&bad); err != nil {
		return 0, fmt.Errorf("unable to count %s.bad_records: %w", db, err)
	}
	return int(events + bad), nil
}

// auditChunk bounds the ids of one IN list.
const auditChunk = 5000

// recorded returns which of keys (event ids, and bad:<p>@<o> for
// undecodable records of topic) the table holds.
func recorded(ctx context.Context, conn driver.Conn, db, table, topic string, keys map[string]bool) (map[string]bool, error) {
	found := map[string]bool{}
	var ids []string
	bad := map[string]bool{}
	for k := range keys {
		if strings.HasPrefix(k, "bad:") {
			bad[k] = true
		} else {
			ids = append(ids, k)
		}
	}
	scan := func(q string, args ...any) error {
		rows, err := conn.Query(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("unable to query %s: %w", db, err)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				return fmt.Errorf("unable to read %s: %w", db, err)
			}
			found[k] = true
		}
		return rows.Err()
	}
	for i := 0; i < len(ids); i += auditChunk {
		chunk := ids[i:min(i+auditChunk, len(ids))]
		if err := scan("SELECT DISTINCT event_id FROM "+db+"."+table+" WHERE event_id IN (SELECT arrayJoin(?))", chunk); err != nil {
			return nil, err
		}
	}
	if len(bad) > 0 {
		var got = map[string]bool{}
		prev := found
		found = got
		if err := scan("SELECT DISTINCT concat('bad:', toString(partition), '@', toString(offset)) FROM "+db+".bad_records WHERE topic = ?", topic); err != nil {
			return nil, err
		}
		found = prev
		for k := range got {
			if bad[k] {
				found[k] = true
			}
		}
	}
	return found, nil
}
