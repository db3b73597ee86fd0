package joiner

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// genLogs builds the three input logs of a partition: many overlapping
// episodes with unstable and extra frames, lost events, rewards far from
// their action, stale versions, truncations and aborts; then, per log,
// local reordering, duplicates, records delivered much too late and
// malformed records. Event times are causal within an episode and no
// episode is silent for longer than the window, the contract the joiner's
// determinism rests on.
func genLogs(seed uint64, episodes int, window time.Duration) [4][]Record {
	rng := rand.New(rand.NewPCG(seed, 0xfeed))
	w := window.Nanoseconds()
	type gen struct {
		kind Kind
		ep   string
		msg  eventspb.Event
		time int64
	}
	var evs []gen
	sec := int64(time.Second)
	for e := range episodes {
		ep := fmt.Sprintf("ep%03d", e)
		t := baseTime + int64(e)*sec/2 + rng.Int64N(3*sec)
		steps := 1 + rng.IntN(6)
		version := uint64(10 + e/4)
		if rng.IntN(10) == 0 {
			version -= 5 // an actor on old weights
		}
		task := &eventspb.TaskRef{TaskId: fmt.Sprintf("task%d", e%7), GroupId: "g", Family: "f", Site: "s"}
		env := func(kind string, step int, n int, at int64) *eventspb.Envelope {
			return &eventspb.Envelope{EventId: fmt.Sprintf("%s.%s%d.%d", ep, kind, step, n), SchemaVersion: 1, ProducedAtUnixNano: at, EpisodeId: ep, Step: uint32(step)}
		}
		add := func(k Kind, msg eventspb.Event, at int64) {
			if rng.IntN(40) == 0 {
				return // lost on the way
			}
			evs = append(evs, gen{kind: k, ep: ep, msg: msg, time: at})
		}
	steps:
		for s := range steps {
			if rng.IntN(5) == 0 {
				add(KindObs, &eventspb.Observation{Envelope: env("u", s, 0, t), Task: task}, t)
				t += sec / 10
			}
			obsID := env("o", s, 0, t).EventId
			add(KindObs, &eventspb.Observation{Envelope: env("o", s, 0, t), Task: task, Stable: true}, t)
			if rng.IntN(10) == 0 {
				t += sec / 5
				add(KindObs, &eventspb.Observation{Envelope: env("o", s, 1, t), Task: task, Stable: true}, t)
			}
			t += rng.Int64N(sec)
			ref := obsID
			if rng.IntN(8) == 0 {
				ref = ""
			}
			add(KindAction, &eventspb.Action{Envelope: env("a", s, 0, t), Type: eventspb.ActionType_ACTION_TYPE_CLICK, ObsEventId: ref, PolicyName: "p", PolicyVersion: version, LogProb: -float64(s)}, t)
			ta := t
			t += rng.Int64N(3 * sec)
			last := s == steps-1
			r := &eventspb.Reward{Envelope: env("r", s, 0, t), Reward: float64(rng.IntN(3)), Done: last}
			switch {
			case rng.IntN(25) == 0:
				r.Aborted, r.Done = true, true
			case last && rng.IntN(4) == 0:
				r.Truncated = true
			}
			rt := t
			if rng.IntN(30) == 0 {
				rt = ta + w + sec // produced beyond the window of its action
			}
			r.Envelope.ProducedAtUnixNano = rt
			add(KindReward, r, rt)
			t = max(t, rt-w/2) // never silent for longer than the window
			if r.Aborted {
				break steps
			}
			if last && (r.Truncated || rng.IntN(2) == 0) {
				t += sec / 2
				add(KindObs, &eventspb.Observation{Envelope: env("o", s+1, 0, t), Task: task, Stable: !r.Truncated || rng.IntN(2) == 0, Terminal: !r.Truncated}, t)
			}
			t += sec / 4
		}
	}
	slices.SortStableFunc(evs, func(a, b gen) int { return int(a.time - b.time) })

	var logs [4][]Record
	for _, ev := range evs {
		b, err := eventspb.Marshal(ev.msg)
		if err != nil {
			panic(err)
		}
		logs[ev.kind] = append(logs[ev.kind], Record{Kind: ev.kind, Value: b, Source: Source{Key: []byte(ev.ep), Timestamp: ev.time}})
	}
	for k := KindObs; k <= KindReward; k++ {
		l := logs[k]
		for i := range l {
			switch rng.IntN(100) {
			case 0, 1, 2, 3, 4, 5, 6, 7, 8, 9: // reorder nearby
				j := min(len(l)-1, i+1+rng.IntN(4))
				l[i], l[j] = l[j], l[i]
			case 10, 11: // delivered far too late
				j := min(len(l)-1, i+40+rng.IntN(40))
				r := l[i]
				copy(l[i:j], l[i+1:j+1])
				l[j] = r
			}
		}
		dups := map[int][]Record{} // a duplicate a little later
		for i, r := range l {
			if rng.IntN(20) == 0 {
				j := min(len(l)-1, i+1+rng.IntN(10))
				dups[j] = append(dups[j], r)
			}
		}
		var out []Record
		for i, r := range l {
			out = append(out, r)
			out = append(out, dups[i]...)
			if rng.IntN(100) == 0 {
				out = append(out, Record{Kind: k, Value: []byte{0xff, 0x01}, Source: Source{Key: r.Source.Key, Timestamp: r.Source.Timestamp}})
			}
		}
		// Sentinels far in the future close every episode.
		far := baseTime + int64(episodes)*sec + 10*w
		env := &eventspb.Envelope{EventId: "sentinel-" + k.String(), SchemaVersion: 1, ProducedAtUnixNano: far, EpisodeId: "sentinel"}
		var msg eventspb.Event
		switch k {
		case KindObs:
			msg = &eventspb.Observation{Envelope: env, Stable: true}
		case KindAction:
			msg = &eventspb.Action{Envelope: env, Type: eventspb.ActionType_ACTION_TYPE_NOOP}
		case KindReward:
			msg = &eventspb.Reward{Envelope: env}
		}
		b, _ := eventspb.Marshal(msg)
		out = append(out, Record{Kind: k, Value: b, Source: Source{Key: []byte("sentinel"), Timestamp: far}})
		for i := range out {
			out[i].Source.Topic, out[i].Source.Offset = topicOf[k], int64(i)
		}
		logs[k] = out
	}
	return logs
}

// interleave merges the logs in a random order that keeps each log's own
// order, with long runs of one topic so that the watermarks drift apart.
func interleave(logs [4][]Record, seed uint64) []Record {
	rng := rand.New(rand.NewPCG(seed, 7))
	pos := [4]int{}
	var out []Record
	for {
		var open []Kind
		for k := KindObs; k <= KindReward; k++ {
			if pos[k] < len(logs[k]) {
				open = append(open, k)
			}
		}
		if len(open) == 0 {
			return out
		}
		k := open[rng.IntN(len(open))]
		for n := 1 + rng.IntN(60); n > 0 && pos[k] < len(logs[k]); n-- {
			out = append(out, logs[k][pos[k]])
			pos[k]++
		}
	}
}

// outcome is what a join produced, as sorted comparable lines.
type outcome struct {
	transitions, episodes, deadLetters, drops []string
}

func (o *outcome) add(t *testing.T, out Output) {
	for _, tr := range out.Transitions {
		b, err := eventspb.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		o.transitions = append(o.transitions, string(b))
	}
	for _, e := range out.Episodes {
		b, err := eventspb.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		o.episodes = append(o.episodes, string(b))
	}
	for _, d := range out.DeadLetters {
		o.deadLetters = append(o.deadLetters, fmt.Sprintf("%s@%d %s %s", d.SourceTopic, d.SourceOffset, d.ReasonCode, d.Reason))
	}
	for _, d := range out.Drops {
		o.drops = append(o.drops, fmt.Sprintf("%s@%d %s", d.Source.Topic, d.Source.Offset, d.Reason))
	}
}

func (o *outcome) sort() {
	for _, s := range [][]string{o.transitions, o.episodes, o.deadLetters, o.drops} {
		slices.Sort(s)
	}
}

// join runs records through a machine; with restoreEvery > 0 the machine
// is rebuilt from its changelog that often, as a new partition owner would.
func join(t *testing.T, set Settings, recs []Record, restoreEvery int) (outcome, Stats) {
	t.Helper()
	m, err := NewMachine(0, set)
	if err != nil {
		t.Fatal(err)
	}
	var o outcome
	changelog := map[string][]byte{}
	var total Stats
	log := inputLog{}
	for i, r := range recs {
		log.add(r)
		m.Apply(r)
		out, err := m.Take()
		if err != nil {
			t.Fatal(err)
		}
		o.add(t, out)
		total.Add(out.Stats)
		for _, c := range out.Changelog {
			if c.Value == nil {
				delete(changelog, c.Key)
			} else {
				changelog[c.Key] = c.Value
			}
		}
		if restoreEvery > 0 && i%restoreEvery == restoreEvery-1 {
			if m, err = NewMachine(0, set); err != nil {
				t.Fatal(err)
			}
			for _, k := range sortedKeys(changelog) {
				if err := m.Restore(k, changelog[k]); err != nil {
					t.Fatal(err)
				}
			}
			if err := log.fill(m); err != nil {
				t.Fatal(err)
			}
		}
	}
	o.sort()
	return o, total
}

// TestDeterministicAcrossInterleavings checks the property replay needs:
// however the three input logs interleave when consumed, and however often
// the partition changes owner, the same history gives the same
// transitions, summaries, dead letters and drops.
func TestDeterministicAcrossInterleavings(t *testing.T) {
	set := Settings{Window: 10 * time.Second, MaxStaleness: 3}
	seeds := uint64(4)
	if testing.Short() || raceEnabled {
		seeds = 1
	}
	if n, err := strconv.ParseUint(os.Getenv("JOINER_DETERMINISM_SEEDS"), 10, 64); err == nil {
		seeds = n // a longer search: JOINER_DETERMINISM_SEEDS=200
	}
	for seed := range seeds {
		logs := genLogs(seed, 120, set.Window)
		var want outcome
		for run := range uint64(6) {
			recs := interleave(logs, seed*100+run)
			got, stats := join(t, set, recs, int(run%3)*37)
			if !stats.Balanced() {
				t.Fatalf("seed %d run %d: counters do not balance: %+v", seed, run, stats)
			}
			if stats.Pending != 3 { // the three sentinels
				t.Fatalf("seed %d run %d: %d events still pending after every episode closed", seed, run, stats.Pending)
			}
			if run == 0 {
				want = got
				if len(want.transitions) < 150 || len(want.deadLetters) == 0 || len(want.drops) == 0 || len(want.episodes) < 50 {
					t.Fatalf("seed %d: generator too tame: %d transitions %d episodes %d dead letters %d drops",
						seed, len(want.transitions), len(want.episodes), len(want.deadLetters), len(want.drops))
				}
				t.Logf("seed %d: %d records, %d transitions, %d episodes, %d dead letters, %d drops", seed, len(recs), len(want.transitions), len(want.episodes), len(want.deadLetters), len(want.drops))
				continue
			}
			for name, pair := range map[string][2][]string{
				"transitions": {want.transitions, got.transitions}, "episodes": {want.episodes, got.episodes},
				"dead letters": {want.deadLetters, got.deadLetters}, "drops": {want.drops, got.drops},
			} {
				if !slices.Equal(pair[0], pair[1]) {
					t.Errorf("seed %d run %d: %s differ (%d vs %d)%s", seed, run, name, len(pair[0]), len(pair[1]), firstDiff(pair[0], pair[1]))
				}
			}
		}
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf(": first at %d: %q vs %q", i, trunc(a[i]), trunc(b[i]))
		}
	}
	return ""
}

func trunc(s string) string {
	if len(s) > 200 {
		return s[:200]
	}
	return s
}
