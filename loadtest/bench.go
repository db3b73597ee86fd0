package loadtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// BenchConfig is one joiner benchmark run.
type BenchConfig struct {
	// NewClient builds clients for the broker under test.
	NewClient joiner.ClientFunc
	// NewJoiner builds one joiner member for the catalog's topics.
	NewJoiner func(cat *topics.Catalog) (JoinerMember, error)
	Log       *slog.Logger
	Load      Config
	// Partitions and Replication size the throwaway topics.
	Partitions  int32
	Replication int16
}

// JoinerMember is what the benchmark needs of a joiner (*joiner.Service).
type JoinerMember interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	Healthy(ctx context.Context) error
	Committed() joiner.Stats
	FirstAssigned() time.Time
	// Transactions are those committed and aborted so far.
	Transactions() (committed, aborted int64)
}

// BenchResult is what a run measured: the same input consumed by a plain
// group consumer (the baseline) and joined by one joiner member, each timed
// from the moment the group assigned it the partitions to its last record
// consumed (joiner: committed, which includes restoring its empty state).
type BenchResult struct {
	Records     int
	Partitions  int32
	ConsumeOnly time.Duration
	Joiner      time.Duration
	// Floor is the time to write the joiner's output again alone (writeFloor),
	// FloorRecords how many records that was, Transactions how many the
	// joiner committed.
	Floor        time.Duration
	FloorRecords int
	Transactions int64
	Verified     Report
	// InputBytes is the sum of the input records' values (obs, actions,
	// rewards, as consume-only read them); Output what the joiner committed.
	InputBytes int64
	Output     OutputSize
}

// BytesPerTransition is the transitions topic's record values over the
// transitions in it.
func (r BenchResult) BytesPerTransition() float64 {
	if r.Output.Transitions == 0 {
		return 0
	}
	return float64(r.Output.TransitionBytes) / float64(r.Output.Transitions)
}

// OutputPerInputByte is every output topic's bytes (transitions, episodes,
// dlq, changelog) over the input's.
func (r BenchResult) OutputPerInputByte() float64 {
	if r.InputBytes == 0 {
		return 0
	}
	return float64(r.Output.Bytes) / float64(r.InputBytes)
}

// ConsumeOnlyRate is records per second of the baseline.
func (r BenchResult) ConsumeOnlyRate() float64 { return rate(r.Records, r.ConsumeOnly) }

// JoinerRate is records per second through the exactly-once join.
func (r BenchResult) JoinerRate() float64 { return rate(r.Records, r.Joiner) }

// Ratio is joiner throughput over consume-only throughput.
func (r BenchResult) Ratio() float64 { return r.JoinerRate() / r.ConsumeOnlyRate() }

// FloorRate is input records per second at the write floor: the rate no
// exactly-once joiner writing the same output could beat.
func (r BenchResult) FloorRate() float64 { return rate(r.Records, r.Floor) }

// Ceiling is the write floor's rate over consume-only: the highest
// joiner/consume-only ratio any joiner writing this output could reach.
func (r BenchResult) Ceiling() float64 { return r.FloorRate() / r.ConsumeOnlyRate() }

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// BenchJoiner creates throwaway topics, produces the load, measures both
// consumers on it, verifies the joiner's output and deletes the topics.
func BenchJoiner(ctx context.Context, c BenchConfig) (BenchResult, error) {
	var id [4]byte
	_, _ = rand.Read(id[:])
	prefix := "bench_" + hex.EncodeToString(id[:]) + "."
	cat := topics.New(topics.WithPrefix(prefix), topics.WithPartitions(c.Partitions), topics.WithReplication(c.Replication))
	floorCat := topics.New(topics.WithPrefix(prefix+"floor."), topics.WithPartitions(c.Partitions), topics.WithReplication(c.Replication))
	res := BenchResult{Partitions: c.Partitions}
	log := c.Log

	adminCl, err := c.NewClient()
	if err != nil {
		return res, err
	}
	defer adminCl.Close()
	for _, k := range []*topics.Catalog{cat, floorCat} {
		if _, err := topics.Apply(ctx, adminCl, k); err != nil {
			return res, err
		}
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		adm := kadm.NewClient(adminCl)
		_, _ = adm.DeleteGroups(ctx, prefix+"consume-only", prefix+"joiner")
		_, _ = adm.DeleteTopics(ctx, append(cat.Names(), floorCat.Names()...)...)
	}()

	prod, err := c.NewClient()
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	exp, err := Generate(ctx, prod, cat, c.Load)
	prod.Close()
	if err != nil {
		return res, err
	}
	res.Records = exp.Records
	log.Info("load produced", "records", exp.Records, "duplicates", exp.Duplicates, "reordered", exp.Reordered, "malformed", len(exp.Malformed), "took", time.Since(t0).Round(time.Millisecond))

	if res.ConsumeOnly, res.InputBytes, err = consumeOnly(ctx, c.NewClient, cat, prefix+"consume-only", exp.Records); err != nil {
		return res, err
	}
	log.Info("consume-only done", "took", res.ConsumeOnly.Round(time.Millisecond))

	j, err := c.NewJoiner(cat)
	if err != nil {
		return res, err
	}
	if err := j.Start(ctx); err != nil {
		return res, err
	}
	for j.Committed().Consumed < int64(exp.Records) {
		if err := j.Healthy(ctx); err != nil {
			return res, err
		}
		select {
		case <-ctx.Done():
			_ = j.Stop(context.Background())
			return res, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	res.Joiner = time.Since(j.FirstAssigned())
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := j.Stop(stopCtx); err != nil {
		return res, err
	}
	res.Transactions, _ = j.Transactions()
	log.Info("joiner done", "took", res.Joiner.Round(time.Millisecond), "transactions", res.Transactions)

	if res.Verified, err = Verify(ctx, c.NewClient, cat, exp); err != nil {
		return res, err
	}
	if res.Floor, res.Output, err = writeFloor(ctx, c.NewClient, cat, floorCat, res.Transactions); err != nil {
		return res, err
	}
	res.FloorRecords = res.Output.Records
	log.Info("write floor done", "records", res.FloorRecords, "took", res.Floor.Round(time.Millisecond))
	return res, nil
}

// consumeOnly is the baseline: a plain group consumer of the same input
// topics (read_committed, like the joiner) that only counts records and
// their values' bytes.
func consumeOnly(ctx context.Context, newClient joiner.ClientFunc, cat *topics.Catalog, group string, records int) (time.Duration, int64, error) {
	var assigned atomic.Int64
	cl, err := newClient(
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			assigned.CompareAndSwap(0, time.Now().UnixNano())
		}),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(cat.Name(topics.Obs), cat.Name(topics.Actions), cat.Name(topics.Rewards)),
		kgo.Balancers(kgo.RangeBalancer()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	n, size := 0, int64(0)
	for n < records {
		fetches := cl.PollRecords(ctx, 10000)
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		n += fetches.NumRecords()
		fetches.EachRecord(func(r *kgo.Record) { size += int64(len(r.Value)) })
	}
	took := time.Since(time.Unix(0, assigned.Load()))
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_ = cl.CommitUncommittedOffsets(ctx)
	return took, size, nil
}

// String renders the side-by-side table. Every rate is input records per
// second, so the rows compare directly.
func (r BenchResult) String() string {
	return fmt.Sprintf("%-18s %12s %10s\n%-18s %12.0f %10.2f\n%-18s %12.0f %10.2f  (%d transactions)\n%-18s %12.0f %10.2f  (its %d output records written again alone, as many transactions)\n",
		"", "records/s", "seconds",
		"consume-only", r.ConsumeOnlyRate(), r.ConsumeOnly.Seconds(),
		"joiner (EOS)", r.JoinerRate(), r.Joiner.Seconds(), r.Transactions,
		"write floor (EOS)", r.FloorRate(), r.Floor.Seconds(), r.FloorRecords)
}

// Sizes renders the output's size beside the rates: bytes per transition
// and output bytes per input byte.
func (r BenchResult) Sizes() string {
	return fmt.Sprintf("bytes per transition: %.0f (%d transitions, %.1f MB); output bytes per input byte: %.3f (%.1f MB of transitions, episodes, dlq and changelog for %.1f MB of obs, actions and rewards)\n",
		r.BytesPerTransition(), r.Output.Transitions, float64(r.Output.TransitionBytes)/1e6,
		r.OutputPerInputByte(), float64(r.Output.Bytes)/1e6, float64(r.InputBytes)/1e6)
}
