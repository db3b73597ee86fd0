package recorderload

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/services/recorder"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// BenchConfig says what Bench measures.
type BenchConfig struct {
	// Catalog names the topics, which already hold the events.
	Catalog *topics.Catalog
	// ClickHouse is the server; Bench creates (and drops) its own databases.
	ClickHouse analytics.Config
	// NewClient builds Kafka clients (seeds, security).
	NewClient recorder.NewClient
	// BatchRecords is the recorder's batch size and the bare insert's
	// chunk size (0: the recorder's default, 50,000).
	BatchRecords int
	// Keep leaves the two databases in place for inspection.
	Keep bool
	Log  *slog.Logger
}

// BenchResult compares the recorder with a bare clickhouse-go batch insert
// of the same rows.
type BenchResult struct {
	Records      int           // records on the topics = rows inserted by each side
	Recorder     time.Duration // first poll to last commit
	RecorderRate float64       // rows/s
	Bare         time.Duration // the INSERTs only (rows decoded beforehand)
	ReadDecode   time.Duration // reading and decoding the records for the bare side (not timed in Bare)
	BareRate     float64       // rows/s
	Ratio        float64       // RecorderRate / BareRate
	RecorderDB   string
	BareDB       string
	Tables       map[string]uint64 // distinct rows per table (identical on both sides)
}

func (r *BenchResult) String() string {
	return fmt.Sprintf("records %d: recorder %.0f rows/s (%s), bare clickhouse-go %.0f rows/s (%s), ratio %.2f",
		r.Records, r.RecorderRate, r.Recorder.Round(time.Millisecond), r.BareRate, r.Bare.Round(time.Millisecond), r.Ratio)
}

const defaultBatch = 50_000

// Bench measures, on the same records, (1) a bare insert: the records are
// read from Kafka and decoded into analytics.Rows first, then only the
// PrepareBatch/Append/Send calls are timed, in chunks of BatchRecords; and
// (2) the recorder, in-process, on a group of its own: consume, decode,
// insert and commit, timed from the first poll to the last commit. Both
// sides insert into freshly migrated databases (same tables and views), and
// must end with identical distinct row counts.
func Bench(ctx context.Context, cfg BenchConfig) (*BenchResult, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	batch := cfg.BatchRecords
	if batch <= 0 {
		batch = defaultBatch
	}
	id := randomID()
	res := &BenchResult{RecorderDB: "bench_recorder_" + id, BareDB: "bench_bare_" + id}
	admin := cfg.ClickHouse
	admin.Database = ""
	conn, err := analytics.Open(ctx, admin)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if !cfg.Keep {
		defer func() {
			cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for _, db := range []string{res.RecorderDB, res.BareDB} {
				if err := conn.Exec(cctx, "DROP DATABASE IF EXISTS "+db); err != nil {
					log.Warn("unable to drop benchmark database", "database", db, "err", err)
				}
			}
		}()
	}

	tr := time.Now()
	chunks, n, err := readChunks(ctx, cfg, batch)
	if err != nil {
		return nil, err
	}
	res.Records = n
	res.ReadDecode = time.Since(tr)
	log.Info("bare insert", "records", n, "chunks", len(chunks), "database", res.BareDB, "read_decode", res.ReadDecode)
	if _, err := analytics.Migrate(ctx, conn, res.BareDB); err != nil {
		return nil, err
	}
	t0 := time.Now()
	for _, c := range chunks {
		if err := c.Insert(ctx, conn, res.BareDB); err != nil {
			return nil, err
		}
	}
	res.Bare = time.Since(t0)
	chunks = nil

	log.Info("recorder", "records", n, "database", res.RecorderDB)
	ch := cfg.ClickHouse
	ch.Database = res.RecorderDB
	rec, err := recorder.New(cfg.Catalog, ch, cfg.NewClient, recorder.WithGroup("bench-recorder-"+id),
		recorder.WithLagInterval(0), recorder.WithBatchRecords(batch), recorder.WithLogger(log))
	if err != nil {
		return nil, err
	}
	if err := rec.Start(ctx); err != nil {
		return nil, err
	}
	for rec.Stats().Records < int64(n) {
		select {
		case <-ctx.Done():
			_ = rec.Stop(context.Background())
			return nil, fmt.Errorf("unable to finish the recorder benchmark: %d of %d records: %w", rec.Stats().Records, n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	st := rec.Stats()
	stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := rec.Stop(stopCtx); err != nil {
		return nil, err
	}
	res.Recorder = st.LastCommit.Sub(st.FirstPoll)
	res.RecorderRate = float64(n) / res.Recorder.Seconds()
	res.BareRate = float64(n) / res.Bare.Seconds()
	res.Ratio = res.RecorderRate / res.BareRate

	ch.Database = res.RecorderDB
	recCounts, err := Counts(ctx, ch)
	if err != nil {
		return nil, err
	}
	ch.Database = res.BareDB
	bareCounts, err := Counts(ctx, ch)
	if err != nil {
		return nil, err
	}
	for t, c := range bareCounts {
		if recCounts[t] != c {
			return res, fmt.Errorf("recorder and bare insert disagree on %s: %d vs %d distinct rows", t, recCounts[t], c)
		}
	}
	res.Tables = recCounts
	return res, nil
}

// readChunks reads every record on the catalog's event topics (up to the
// end offsets at the time of the call) and decodes them, in consumption
// order, into Rows of batch records each.
func readChunks(ctx context.Context, cfg BenchConfig, batch int) ([]*analytics.Rows, int, error) {
	kinds := map[string]string{}
	var names []string
	for topic := range analytics.EventTables {
		kinds[cfg.Catalog.Name(topic)] = topic
		names = append(names, cfg.Catalog.Name(topic))
	}
	cl, err := cfg.NewClient(kgo.ConsumeTopics(names...), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, 0, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, 0, fmt.Errorf("unable to list end offsets: %w", err)
	}
	want := 0
	ends.Each(func(o kadm.ListedOffset) { want += int(o.Offset) })
	var chunks []*analytics.Rows
	cur := analytics.NewRows()
	n, inCur := 0, 0
	now := time.Now()
	for n < want {
		fetches := cl.PollRecords(ctx, 10_000)
		if err := ctx.Err(); err != nil {
			return nil, 0, fmt.Errorf("unable to read the benchmark records (%d of %d): %w", n, want, err)
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) { ferr = errors.Join(ferr, err) })
		if ferr != nil {
			return nil, 0, fmt.Errorf("unable to read the benchmark records: %w", ferr)
		}
		fetches.EachRecord(func(kr *kgo.Record) {
			rec := analytics.Record{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Key: kr.Key,
				Value: kr.Value, Timestamp: kr.Timestamp, RecordedAt: now, Run: cfg.Catalog.Prefix}
			_ = cur.Add(kinds[kr.Topic], &rec) // undecodable records become bad_records rows, as in the recorder
			n++
			if inCur++; inCur == batch {
				chunks = append(chunks, cur)
				cur, inCur = analytics.NewRows(), 0
			}
		})
	}
	if inCur > 0 {
		chunks = append(chunks, cur)
	}
	return chunks, n, nil
}

// Counts returns the distinct rows (events by id, bad records by
// coordinates) of every table of the database ch names, over all time, with
// the event_counts saved query.
func Counts(ctx context.Context, ch analytics.Config) (map[string]uint64, error) {
	q, err := analytics.LookupQuery("event_counts")
	if err != nil {
		return nil, err
	}
	conn, err := analytics.Open(ctx, ch)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	res, err := analytics.Run(ctx, conn, q, analytics.Params{Since: time.Unix(0, 0), Until: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, row := range res.Rows {
		name, _ := row[0].(string)
		events, _ := row[2].(uint64)
		out[name] = events
	}
	return out, nil
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
