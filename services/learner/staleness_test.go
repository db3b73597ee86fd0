package learner

import (
	"math/rand/v2"
	"testing"
	"time"

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
	if got := s.behind(); got != 1 {
		t.Fatalf("behind %v with 4 samples left (the rest dropped as stale), want 1 version: what the replay can still give", got)
	}
	s.replay.add(episodeOf(0, 12)...)
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

// Epochs rounds: at least one version's worth of samples (the replay's
// minimum before the first), all taken at once; the staleness bound still
// sees the backlog once training started though the replay is drained.
func TestEpochsRounds(t *testing.T) {
	if got, err := ParseSampling("epochs"); err != nil || got != Epochs {
		t.Fatalf("ParseSampling(epochs) = %q, %v", got, err)
	}
	s, err := New(nil, nil, topics.New(), WithSampling(Epochs), WithBatchSize(64), WithReplayRatio(8), WithPublishEvery(10),
		WithMinReplay(128), WithCurriculum(CurriculumConfig{InFlight: 4}), WithMaxStaleness(1))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.epochChunk(); got != 128 {
		t.Fatalf("first chunk %d, want the replay's minimum 128", got)
	}
	s.rlDone.Store(1)
	if got := s.epochChunk(); got != 80 {
		t.Fatalf("chunk %d, want one version's worth: 10 updates × 64 / 8 = 80", got)
	}
	s.replay.add(episodeOf(3, 90)...)
	if got := s.replay.takeAll(); len(got) != 90 || s.replay.len() != 0 {
		t.Fatalf("took %d, left %d; want 90 and 0", len(got), s.replay.len())
	}
	// 400 ingested at ratio 8 owe 50 updates; 20 done: 30 owed. With the
	// replay drained and no round under way the learner waits for data:
	// not behind.
	s.ingested.Store(400)
	s.rlDone.Store(20)
	if got := s.behind(); got != 0 {
		t.Fatalf("behind %v while waiting for data, want 0", got)
	}
	s.rounds.Store(30) // a round under way: 3 versions of updates left
	if got := s.behind(); got != 3 {
		t.Fatalf("behind %v with 30 minibatches left, want 3", got)
	}
	if got := s.cur.next(0); len(got) != 0 {
		t.Fatalf("issued %d while 3 versions behind a bound of 1", len(got))
	}
}

// A hold lasts at most maxHold at a time, then one round is issued: held
// longer than the actors' task pause, they would run local tasks, which
// feed the very backlog the hold waits out.
func TestStalenessHoldIsBounded(t *testing.T) {
	s, err := New(nil, nil, topics.New(), WithCurriculum(CurriculumConfig{InFlight: 4}), WithMaxStaleness(1))
	if err != nil {
		t.Fatal(err)
	}
	behind := true
	s.cur.hold = func() bool { return behind }
	t0 := time.Now()
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{
		{0, true}, {5 * time.Second, true}, {maxHold, false}, {maxHold + time.Second, true}, {2*maxHold - time.Second, true}, {2 * maxHold, false},
	} {
		if got := s.cur.holding(t0.Add(c.at)); got != c.want {
			t.Fatalf("holding at %s: %v, want %v", c.at, got, c.want)
		}
	}
	behind = false
	if s.cur.holding(t0.Add(2*maxHold + time.Second)) {
		t.Fatal("holding once caught up")
	}
	behind = true
	if !s.cur.holding(t0.Add(2*maxHold + 2*time.Second)) {
		t.Fatal("a new hold did not start afresh")
	}
	if maxHold >= 30*time.Second {
		t.Fatalf("maxHold %s is not under the actors' default task pause of 30s", maxHold)
	}
}

// After the warm start every policy-gradient batch carries its share of
// demonstrations; before it, or with the mix off, or with no
// demonstration in, the batch goes out as drawn.
func TestDemoMix(t *testing.T) {
	if _, err := New(nil, nil, topics.New(), WithDemoMix(1.5)); err == nil {
		t.Fatal("a demonstration mix above 1 was accepted")
	}
	demos := func(b []*sample) (n int) {
		for _, s := range b {
			if s.demo {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		name   string
		mix    float64
		demos  int
		bcDone bool
		want   int
	}{
		{"warm start over", 0.25, 40, true, 16},
		{"during the warm start", 0.25, 40, false, 0},
		{"mix off", 0, 40, true, 0},
		{"no demonstrations", 0.25, 0, true, 0},
		{"fewer than the share", 0.5, 5, true, 32},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(nil, nil, topics.New(), WithDemoMix(c.mix))
			if err != nil {
				t.Fatal(err)
			}
			for range c.demos {
				s.demos.add(&sample{demo: true, key: "d"})
			}
			s.bcDone.Store(c.bcDone)
			s.replay.add(episodeOf(0, 64)...)
			drawn := s.replay.batch(64)
			got := s.withDemos(drawn)
			if len(got) != 64+c.want || demos(got) != c.want {
				t.Fatalf("batch of %d with %d demonstrations, want %d with %d", len(got), demos(got), 64+c.want, c.want)
			}
			for i := range drawn {
				if got[i] != drawn[i] {
					t.Fatalf("sample %d of the drawn batch changed", i)
				}
			}
			// The sync loop's minibatches carry the same share.
			round := episodeOf(1, 128)
			for i, mb := range s.syncMinibatches(round, rand.New(rand.NewPCG(1, 1))) {
				if d := demos(mb); d != c.want || len(mb)-d != 64 {
					t.Fatalf("sync minibatch %d: %d samples with %d demonstrations, want 64 with %d", i, len(mb)-d, d, c.want)
				}
			}
		})
	}
}
