package learner

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// benchTransition is a transition like the actors' (a 128x98 JPEG wire
// frame of quality 80, 30 elements); split and version pick the filter it
// meets.
func benchTransition(b testing.TB, split eventspb.Split, version uint64) []byte {
	b.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 98, 128))
	for i := range img.Pix {
		img.Pix[i] = byte(i*7 + i/391)
	}
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, img, &jpeg.Options{Quality: 80}); err != nil {
		b.Fatal(err)
	}
	env := eventspb.NewEnvelope("bench")
	env.EpisodeId, env.Step = "ep-1", 3
	obs := &eventspb.Observation{Envelope: env, Frame: jb.Bytes(), FrameFormat: "jpeg", Width: 98, Height: 128,
		Task:        &eventspb.TaskRef{TaskId: "t", Family: "login", Site: "s1", Split: split},
		Instruction: `Enter "alice" as the username and press Login`, Stable: true, StabilityScore: 1}
	for i := range 30 {
		obs.Elements = append(obs.Elements, &eventspb.Element{Bid: fmt.Sprint(i), Role: "button", Text: fmt.Sprintf("element %d text", i),
			Box: &eventspb.Box{X: float32(i), Y: float32(2 * i), W: 20, H: 10}})
	}
	aenv := eventspb.NewEnvelope("bench")
	aenv.EpisodeId, aenv.Step, aenv.Source = "ep-1", 3, eventspb.Source_SOURCE_POLICY
	tr := &eventspb.Transition{Envelope: eventspb.NewEnvelope("bench"), EpisodeId: "ep-1", Step: 3, Obs: obs,
		Action: &eventspb.Action{Envelope: aenv, Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: "2", LogProb: -1, PolicyVersion: version},
		Done:   true, PolicyVersion: version, Family: "login", Site: "s1"}
	tr.Envelope.EpisodeId, tr.Envelope.Step = "ep-1", 3
	v, err := eventspb.Marshal(tr)
	if err != nil {
		b.Fatal(err)
	}
	return v
}

// BenchmarkIngest is the learner's cost per transition record: one held
// out (test split), one too stale to train on, one trained on.
func BenchmarkIngest(b *testing.B) {
	for _, c := range []struct {
		name    string
		split   eventspb.Split
		version uint64
	}{
		{"held_out", eventspb.Split_SPLIT_TEST, 10},
		{"stale", eventspb.Split_SPLIT_TRAIN, 1},
		{"trained", eventspb.Split_SPLIT_TRAIN, 10},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, err := New(nil, nil, topics.New(), WithMaxPolicyLag(2))
			if err != nil {
				b.Fatal(err)
			}
			s.arch = s.o.arch
			s.version.Store(10)
			r := &kgo.Record{Topic: "transitions", Value: benchTransition(b, c.split, c.version)}
			ctx, now := context.Background(), time.Now()
			b.ReportAllocs()
			for b.Loop() {
				s.ingest(ctx, r, now)
			}
		})
	}
}

// BenchmarkDecodeKept is the decoding of a record the filters keep: in
// full at once (as before the light decode), and light then completed.
func BenchmarkDecodeKept(b *testing.B) {
	v := benchTransition(b, eventspb.Split_SPLIT_TRAIN, 10)
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := eventspb.DecodeTransition(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("light_then_full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lt, ok := lightTransition(v)
			if !ok {
				b.Fatal("refused")
			}
			if _, ok := lt.full(); !ok {
				b.Fatal("not completed")
			}
		}
	})
}
