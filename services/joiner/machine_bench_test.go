package joiner

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// benchRecords is loadtest-like traffic: 8 concurrent executors, 8-step
// episodes, 256-byte frames, in order.
func benchRecords(n int) []Record {
	var recs []Record
	offsets := map[Kind]int64{}
	frame := make([]byte, 256)
	t := baseTime
	add := func(k Kind, ep string, msg eventspb.Event) {
		b, err := eventspb.Marshal(msg)
		if err != nil {
			panic(err)
		}
		recs = append(recs, Record{Kind: k, Value: b, Source: Source{Topic: topicOf[k], Offset: offsets[k], Key: []byte(ep), Timestamp: t}})
		offsets[k]++
	}
	task := &eventspb.TaskRef{TaskId: "task", GroupId: "g", Family: "click", Site: "s"}
	for e := 0; len(recs) < n; e++ {
		ep := fmt.Sprintf("bench-%06d", e)
		env := func(kind string, s int) *eventspb.Envelope {
			t += int64(time.Millisecond)
			return &eventspb.Envelope{EventId: fmt.Sprintf("%s.%s%d", ep, kind, s), SchemaVersion: 1, ProducedAtUnixNano: t, EpisodeId: ep, Step: uint32(s)}
		}
		for s := 0; s <= 8; s++ {
			add(KindObs, ep, &eventspb.Observation{Envelope: env("o", s), Task: task, Frame: frame, Stable: true, Terminal: s == 8,
				Elements: []*eventspb.Element{{Bid: "b1", Role: "button", Text: "ok", Box: &eventspb.Box{X: 1, Y: 2, W: 3, H: 4}}}})
			if s == 8 {
				break
			}
			add(KindAction, ep, &eventspb.Action{Envelope: env("a", s), Type: eventspb.ActionType_ACTION_TYPE_CLICK, ObsEventId: fmt.Sprintf("%s.o%d", ep, s), PolicyName: "p", PolicyVersion: 1})
			r := &eventspb.Reward{Envelope: env("r", s), Done: s == 7}
			if r.Done {
				r.RawReward, r.DecayedReward = 0.5, 0.25
			}
			add(KindReward, ep, r)
		}
	}
	return recs
}

// BenchmarkMachine measures the join alone (decode, join, changelog and
// transition encoding every 2000 records as the service's transactions
// would). cpu-ns/record is process CPU time, which a busy shared machine
// distorts less than wall time.
func BenchmarkMachine(b *testing.B) {
	recs := benchRecords(50000)
	cpu0 := cpuTime()
	n := 0
	for b.Loop() {
		m, _ := NewMachine(0, DefaultSettings())
		for i, r := range recs {
			m.Apply(r)
			if i%2000 == 1999 {
				out, err := m.Take()
				if err != nil {
					b.Fatal(err)
				}
				for j := range out.Transitions {
					if _, err := out.MarshalTransition(j, 0); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		n += len(recs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/record")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n), "cpu-ns/record")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
