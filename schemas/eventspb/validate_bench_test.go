package eventspb

import "testing"

// BenchmarkValidateObservation: Validate runs on every consumed event (the
// joiner and the recorder decode everything), so it must stay cheap.
func BenchmarkValidateObservation(b *testing.B) {
	o := &Observation{
		Envelope: &Envelope{EventId: "x", SchemaVersion: 1, EpisodeId: "e"},
		Task:     &TaskRef{TaskId: "t", Tier: Tier_TIER_EASY},
		Frame:    make([]byte, 256),
		Stable:   true,
		Elements: []*Element{{Bid: "b1", Role: "button", Text: "ok", Box: &Box{X: 1}}, {Bid: "b2", Text: "x", Box: &Box{}}},
	}
	for b.Loop() {
		if err := Validate(o); err != nil {
			b.Fatal(err)
		}
	}
}
