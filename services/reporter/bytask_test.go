package reporter

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

func TestByTask(t *testing.T) {
	start := time.Unix(1000, 0)
	s := NewStats(start)
	// raw: 1 for a success, -1 for a failure, but partial overrides it
	// once (a success with raw reward 0.1, find-greatest's wrong answer).
	partial := -1
	add := func(i int, family string, tier eventspb.Tier, heldOut, success bool, version uint64) {
		e := ep(start.Add(time.Duration(i)*time.Second), heldOut, success, version)
		e.Family, e.Tier = family, tier
		e.RawReward = -1
		if success {
			e.RawReward = 1
		}
		if i == partial {
			e.RawReward = 0.1
		}
		s.AddEpisode(e)
	}
	i := 0
	// click-test: the random-init policy fails held-out twice, then the
	// trained one succeeds 3 of 4.
	for _, ok := range []bool{false, false} {
		add(i, "miniwob/click-test", eventspb.Tier_TIER_EASY, true, ok, 0)
		i++
	}
	partial = i + 1 // the second trained success
	for _, ok := range []bool{true, true, false, true} {
		add(i, "miniwob/click-test", eventspb.Tier_TIER_EASY, true, ok, 3)
		i++
	}
	add(i, "miniwob/click-test", eventspb.Tier_TIER_EASY, false, true, 3)
	add(i, "miniwob/login-user", eventspb.Tier_TIER_EASY, false, false, 3)
	add(i, "miniwob/email-inbox-reply", eventspb.Tier_TIER_MEDIUM, true, true, 3)
	// A task beyond the action space, run by hand: left out of every figure.
	add(i, "miniwob/draw-circle", eventspb.Tier_TIER_EASY, true, false, 3)

	rows := s.ByTask(4, start.Add(time.Hour))
	want := []struct {
		family                 string
		heldOut, train, random Rate
	}{
		// Held out: raw 1, 0.1, -1, 1: 3 successes as raw > 0, 2 strict.
		{"miniwob/click-test", Rate{Success: 3, N: 4, Strict: 2, Raw: 1.1}, Rate{1, 1, 1, 1}, Rate{0, 2, 0, -2}},
		{"miniwob/login-user", Rate{}, Rate{0, 1, 0, -1}, Rate{}},
		{"miniwob/email-inbox-reply", Rate{1, 1, 1, 1}, Rate{}, Rate{}},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v, want %d (easy first, no draw-circle)", rows, len(want))
	}
	for k, w := range want {
		r := rows[k]
		if r.Family != w.family || !sameRate(r.HeldOut, w.heldOut) || !sameRate(r.Train, w.train) || !sameRate(r.RandomHeldOut, w.random) {
			t.Errorf("row %d = %+v, want %+v", k, r, w)
		}
	}
	if s.Episodes() != 9 {
		t.Errorf("%d episodes counted, want 9 (draw-circle left out)", s.Episodes())
	}

	dir := t.TempDir()
	paths, err := WriteReport(dir, s, start.Add(time.Minute), 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"## Held-out success by task", "| miniwob/click-test | easy | 3/4 (75%) | 1/1 (100%) | 0/2 (0%) | not reached |", "| miniwob/login-user | easy | - | 0/1 (0%) | - | not reached |",
		"## MiniWoB++ scores, as the published tables count them",
		"| miniwob/click-test | dev | 0.28 | 2/4 | 3/4 | -1.00 |", "| miniwob/login-user | dev | - | - | - | - |",
		"Mean score over the 2 tasks with held-out episodes: 0.64 (1 above the published human score).",
		"Development set: mean score 0.28 over 1 task (0 above the human score). Other tasks: mean score 1.00 over 1 task (1 above the human score).",
		"Synapse"} {
		if !strings.Contains(string(md), line) {
			t.Errorf("report lacks %q:\n%s", line, md)
		}
	}
	if strings.Contains(string(md), "draw-circle") {
		t.Errorf("report shows a task beyond the action space:\n%s", md)
	}
}

// A task's time to TaskTarget: the first held-out episode at which its last
// TaskWindow greedy episodes reach it; training episodes and other tasks
// never count.
func TestTaskTimeTo(t *testing.T) {
	start := time.Unix(1000, 0)
	s := NewStats(start)
	add := func(sec int, family string, heldOut, success bool) {
		e := ep(start.Add(time.Duration(sec)*time.Second), heldOut, success, 5)
		e.Family, e.Tier = family, eventspb.Tier_TIER_EASY
		s.AddEpisode(e)
	}
	add(1, "miniwob/enter-text", true, false)
	add(2, "miniwob/enter-text", true, false)
	for k := range 8 {
		add(10+k, "miniwob/enter-text", true, true)
		add(10+k, "miniwob/enter-text", false, true) // training: not counted
		add(10+k, "miniwob/click-test", true, true)  // another task
	}
	// 8/10 after the eighth success (two failures in the window): not yet.
	if d, ok := s.TaskTimeTo("miniwob/enter-text", TaskTarget, TaskWindow); ok {
		t.Fatalf("reached at %s with 8 of the last 10 held-out episodes won, want not yet", d)
	}
	add(30, "miniwob/enter-text", true, true) // window: 1 failure, 9 successes
	d, ok := s.TaskTimeTo("miniwob/enter-text", TaskTarget, TaskWindow)
	if !ok || d != 30*time.Second {
		t.Fatalf("time to %.0f%% = %s, %v; want 30s", 100*TaskTarget, d, ok)
	}
	if _, ok := s.TaskTimeTo("miniwob/click-test", TaskTarget, TaskWindow); ok {
		t.Fatal("click-test has 8 held-out episodes, fewer than the window: want not reached")
	}
}

// sameRate compares rates, the raw sums to float precision.
func sameRate(a, b Rate) bool {
	return a.Success == b.Success && a.N == b.N && a.Strict == b.Strict && math.Abs(a.Raw-b.Raw) < 1e-9
}
