package learner

import (
	"testing"

	"github.com/asyncwebrl/asyncwebrl/topics"
)

// The staleness bound: the scheduler issues while the learner owes at most
// eta versions of updates, holds back beyond, and never before training can
// start (holding then would starve the learner of its first samples).
func TestStalenessBoundHoldsTasks(t *testing.T) {
	s, err := New(nil, nil, topics.New(), WithBatchSize(8), WithReplayRatio(4), WithPublishEvery(2), WithMinReplay(4),
		WithCurriculum(CurriculumConfig{InFlight: 4}), WithMaxStaleness(1.5))
	if err != nil {
		t.Fatal(err)
	}
	if s.cur.hold == nil {
		t.Fatal("no hold with a staleness bound")
	}
	// 16 samples at ratio 4 owe 8 updates of 8: 4 versions of 2 updates.
	s.ingested.Store(16)
	if got := s.behind(); got != 0 {
		t.Fatalf("behind %v before the replay's minimum, want 0", got)
	}
	if got := len(s.cur.next(0)); got != 4 {
		t.Fatalf("issued %d before training can start, want 4", got)
	}
	s.replay.add(episodeOf(0, 4)...)
	if got := s.behind(); got != 4 {
		t.Fatalf("behind %v, want 4 versions", got)
	}
	if got := s.cur.next(0); len(got) != 0 {
		t.Fatalf("issued %d while 4 versions behind a bound of 1.5", len(got))
	}
	s.rlDone.Store(5) // 3 updates owed: 1.5 versions, at the bound
	if got := len(s.cur.next(1)); got != 3 {
		t.Fatalf("issued %d at the bound with 1 queued, want 3", got)
	}
	s.rlDone.Store(9) // ahead of the ratio: nothing owed
	if got := s.behind(); got != 0 {
		t.Fatalf("behind %v when ahead, want 0", got)
	}

	off, err := New(nil, nil, topics.New(), WithCurriculum(CurriculumConfig{InFlight: 4}))
	if err != nil {
		t.Fatal(err)
	}
	if off.cur.hold != nil {
		t.Fatal("a hold without a staleness bound")
	}
	if syncL, err := New(nil, nil, topics.New(), WithCurriculum(CurriculumConfig{InFlight: 4}), WithMaxStaleness(1), WithSyncBatches(8)); err != nil || syncL.cur.hold != nil {
		t.Fatalf("the on-policy loop got a staleness hold (err %v)", err)
	}
	if _, err := New(nil, nil, topics.New(), WithMaxStaleness(-1)); err == nil {
		t.Fatal("a negative staleness bound was accepted")
	}
}

// With a max policy lag, the replay drops what fell behind as versions
// advance, not only what arrived late: FIFO eviction alone keeps whatever
// size the buffer grew to while the learner was behind.
func TestEvictStale(t *testing.T) {
	s, err := New(nil, nil, topics.New(), WithMaxPolicyLag(2))
	if err != nil {
		t.Fatal(err)
	}
	for v := range uint64(6) {
		s.replay.add(episodeOf(v, 3)...)
	}
	if got := s.evictStale(); got != 18 {
		t.Fatalf("at version 0 the replay holds %d, want all 18", got)
	}
	s.version.Store(5) // versions 3, 4 and 5 are within the lag
	if got := s.evictStale(); got != 9 {
		t.Fatalf("at version 5 the replay holds %d, want 9", got)
	}
	for _, smp := range s.replay.batch(64) {
		if smp.version < 3 {
			t.Fatalf("drew a sample of version %d at version 5 with a lag of 2", smp.version)
		}
	}

	off, err := New(nil, nil, topics.New())
	if err != nil {
		t.Fatal(err)
	}
	off.replay.add(episodeOf(0, 3)...)
	off.version.Store(50)
	if got := off.evictStale(); got != 3 {
		t.Fatalf("without a lag the replay holds %d, want 3", got)
	}
}
