package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestIntegrationCleanStopRecordsEveryEvent runs `-target=all` on the real
// broker, ClickHouse and Chromium for a short run and lets -duration stop
// it: the actors and the curriculum stop producing, the joiner and then the
// recorder drain, and the process exits 0. Afterwards ClickHouse holds every
// committed action, observation and reward of the run (issue #15: before,
// the recorder stopped wherever it was, and the last events of a run were
// left to the next one).
func TestIntegrationCleanStopRecordsEveryEvent(t *testing.T) {
	testenv.Parallel(t)
	r := startAllTargets(t, "all", "drain",
		"-instance-id=drain-test", "-duration=40s", "-executors=2", "-max-tier=easy", "-in-flight=4",
		"-stop-timeout=90s")
	p, seeds, db, cat := r.p, r.seeds, r.db, r.cat
	select {
	case <-p.Done:
	case <-time.After(5 * time.Minute):
		t.Fatal("the run did not end within 5 minutes")
	}
	if p.Err != nil {
		t.Fatalf("exit: %v", p.Err)
	}
	if b, err := os.ReadFile(p.Log); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			for _, m := range []string{`msg="producing ended"`, "msg=drained", `msg="drain incomplete`, `msg="joiner drained"`, `msg="recorder drained"`, "not drained", `msg="stopped cleanly"`} {
				if strings.Contains(line, m) {
					t.Log(line)
					break
				}
			}
		}
	}
	for _, line := range []string{"stopped cleanly", `msg="producing ended" service=actor`, `msg="producing ended" service=learner`,
		"msg=drained service=joiner", "msg=drained service=recorder"} {
		if !p.LogContains(t, line) {
			t.Errorf("log lacks %q", line)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := analytics.Open(ctx, analyticstest.Config(t, db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, topic := range []string{topics.Actions, topics.Obs, topics.Rewards} {
		inKafka, err := countCommitted(ctx, seeds, cat.Name(topic))
		if err != nil {
			t.Fatal(err)
		}
		var stored uint64
		if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT uniqExact(event_id) FROM %s.%s", db, topic)).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d records in Kafka, %d events in ClickHouse", topic, inKafka, stored)
		if inKafka == 0 {
			t.Errorf("%s: the run produced nothing", topic)
		}
		if stored != uint64(inKafka) {
			t.Errorf("%s: %d events in ClickHouse after a clean stop, %d committed records in Kafka", topic, stored, inKafka)
		}
	}
}

// countCommitted counts the committed data records of topic: read
// committed, control records kept so that a partition ending on a
// transaction marker is seen to end.
func countCommitted(ctx context.Context, seeds []string, topic string) (int, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	left := map[int32]int64{}
	from := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		if s, ok := starts.Lookup(topic, o.Partition); ok && o.Offset > s.Offset {
			left[o.Partition] = o.Offset
			from[o.Partition] = kgo.NewOffset().At(s.Offset)
		}
	})
	if len(left) == 0 {
		return 0, nil
	}
	rd, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(), kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(64<<20))
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	n := 0
	for len(left) > 0 {
		fs := rd.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("unable to count %s (%d partitions unread): %w", topic, len(left), err)
		}
		if err := fs.Err(); err != nil {
			return 0, fmt.Errorf("unable to count %s: %w", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := left[r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			if !r.Attrs.IsControl() {
				n++
			}
			if r.Offset >= end-1 {
				delete(left, r.Partition)
			}
		})
	}
	return n, nil
}
