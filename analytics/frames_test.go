package analytics_test

import (
	"fmt"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestRowsKeepFrames: with WithFrames(20), every frame of a greedy
// (held-out) episode is kept, a training episode's only when its id is
// sampled, demonstrations by the same rule, a frame already buffered once,
// and no frame at all without the option.
func TestRowsKeepFrames(t *testing.T) {
	var sampled, skipped string
	for i := 0; sampled == "" || skipped == ""; i++ {
		id := fmt.Sprintf("ep-%d", i)
		if analytics.FrameSampled(id, 20) {
			sampled = id
		} else {
			skipped = id
		}
	}
	n := 0
	rec := func(episode string, split eventspb.Split, frame string) *analytics.Record {
		n++
		env := eventspb.NewEnvelope("test")
		env.EpisodeId, env.Source = episode, eventspb.Source_SOURCE_POLICY
		b, err := eventspb.Marshal(&eventspb.Observation{Envelope: env, Task: &eventspb.TaskRef{Split: split},
			Frame: []byte(frame), FrameFormat: "jpeg", Width: 8, Height: 8})
		if err != nil {
			t.Fatal(err)
		}
		return &analytics.Record{Topic: topics.Obs, Offset: int64(n), Value: b, Run: "r."}
	}
	train, test := eventspb.Split_SPLIT_TRAIN, eventspb.Split_SPLIT_TEST
	recs := []*analytics.Record{
		rec("eval-1", test, "f1"), rec("eval-1", test, "f2"), rec("eval-1", test, "f2"), // greedy: 2 distinct frames
		rec(sampled, train, "f3"), rec(sampled, train, "f1"), // sampled: f3 (f1 is buffered already)
		rec(skipped, train, "f4"), // not sampled
		rec("eval-2", test, ""),   // no frame
	}
	for _, tc := range []struct {
		opts []analytics.RowsOption
		want int
	}{{nil, 0}, {[]analytics.RowsOption{analytics.WithFrames(20)}, 3}, {[]analytics.RowsOption{analytics.WithFrames(0)}, 2}, {[]analytics.RowsOption{analytics.WithFrames(1)}, 4}} {
		rows := analytics.NewRows(tc.opts...)
		for _, r := range recs {
			if err := rows.Add(topics.Obs, r); err != nil {
				t.Fatal(err)
			}
		}
		if got := rows.Counts(); got["frames"] != tc.want || got["obs"] != len(recs) {
			t.Errorf("options %d: %d frames and %d obs rows, want %d and %d", len(tc.opts), got["frames"], got["obs"], tc.want, len(recs))
		}
	}
}
