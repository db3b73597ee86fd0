package recorder_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/services/recorder"
)

// TestIntegrationRecorderKeepsFrames: with the default frame sample, the
// recorder stores every frame of the greedy episode, and the training
// episode's only when its id is sampled, once per hash although every
// record arrives twice, under the run; the obs rows keep the elements'
// bids and boxes.
func TestIntegrationRecorderKeepsFrames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f := newFixture(t, ctx)
	rec, err := recorder.New(f.catalog, analyticstest.Config(t, f.db), f.newClient, recorder.WithGroup(f.group),
		recorder.WithLinger(100*time.Millisecond), recorder.WithLagInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer rec.Stop(context.Background())
	items := analyticstest.EpisodeDataset(f.catalog.Prefix)
	f.produce(items)
	f.produce(items)
	f.waitCounts(map[string]uint64{"obs": 4, "actions": 3, "rewards": 3, "episodes": 2})
	// A batch is committed once all its tables are inserted, frames too.
	for f.committed() < int64(2*len(items)) {
		time.Sleep(50 * time.Millisecond)
	}

	want := uint64(3) // the greedy episode's three distinct frames
	if analytics.FrameSampled(f.catalog.Prefix+"train-1", recorder.DefaultFrameSample) {
		want++
	}
	conn := analyticstest.Open(t)
	row := conn.QueryRow(ctx, fmt.Sprintf(`SELECT uniqExact(hash), countIf(run != '%s'),
		(SELECT count() FROM %[2]s.obs WHERE kind = 'greedy' AND frame_sha256 NOT IN (SELECT hash FROM %[2]s.frames)),
		(SELECT any(element_boxes[indexOf(element_bids, 'b2')]) FROM %[2]s.obs)
		FROM %[2]s.frames`, f.catalog.Prefix, f.db))
	var (
		frames, otherRun, greedyMissing uint64
		box                             []float32
	)
	if err := row.Scan(&frames, &otherRun, &greedyMissing, &box); err != nil {
		t.Fatal(err)
	}
	b2 := analyticstest.Boxes["b2"]
	if frames != want || otherRun != 0 || greedyMissing != 0 || fmt.Sprint(box) != fmt.Sprint(b2[:]) {
		t.Fatalf("frames: %d distinct (want %d), %d of another run, %d greedy observations without their frame; b2's box %v (want %v)",
			frames, want, otherRun, greedyMissing, box, b2)
	}
}
