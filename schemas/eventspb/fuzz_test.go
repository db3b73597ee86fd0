package eventspb

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"
)

// fuzzDecode seeds f with valid events and checks, for arbitrary bytes, that
// decoding never panics, fails only with a *DecodeError, and that whatever
// decodes re-encodes (passing Marshal's validation) and decodes to an equal
// message.
func fuzzDecode[T any, M interface {
	*T
	Event
}](f *testing.F, seeds ...M) {
	for _, s := range seeds {
		b, err := Marshal(s)
		if err != nil {
			f.Fatalf("seed: %v", err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2]) // truncated
	}
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x00}) // empty envelope

	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode[T, M](b)
		if err != nil {
			if _, ok := errors.AsType[*DecodeError](err); !ok {
				t.Fatalf("error %T is not a *DecodeError: %v", err, err)
			}
			if m != nil {
				t.Fatal("non-nil message with an error")
			}
			return
		}
		again, err := Marshal(m)
		if err != nil {
			t.Fatalf("decoded event does not re-encode: %v", err)
		}
		m2, err := Decode[T, M](again)
		if err != nil {
			t.Fatalf("re-encoded event does not decode: %v", err)
		}
		if !proto.Equal(m, m2) {
			t.Fatalf("re-encoding changed the event:\nfirst  %v\nsecond %v", m, m2)
		}
	})
}

func FuzzDecodeTask(f *testing.F) { fuzzDecode[Task](f, testTask()) }

func FuzzDecodeObservation(f *testing.F) {
	bare := testObservation(0)
	bare.Elements, bare.Task, bare.Timings = nil, nil, nil
	fuzzDecode[Observation](f, testObservation(1), bare)
}

func FuzzDecodeAction(f *testing.F) {
	click := testAction(4)
	click.Type, click.Bid, click.X, click.Y, click.TextToken = ActionType_ACTION_TYPE_CLICK, "", 12.5, 40, nil
	fuzzDecode[Action](f, testAction(3), click)
}

func FuzzDecodeReward(f *testing.F) { fuzzDecode[Reward](f, testReward()) }

func FuzzDecodeTelemetry(f *testing.F) { fuzzDecode[Telemetry](f, testTelemetry()) }

func FuzzDecodeTransition(f *testing.F) {
	terminal := testTransition()
	terminal.NextObsEventId, terminal.NextObsTopic, terminal.NextObsPartition, terminal.NextObsOffset, terminal.Done = "", "", 0, 0, true
	// Written before next_obs_event_id: s_t+1 embedded whole.
	old := testTransition()
	old.NextObsEventId, old.NextObsTopic, old.NextObsPartition, old.NextObsOffset, old.NextObs = "", "", 0, 0, testObservation(3)
	fuzzDecode[Transition](f, testTransition(), terminal, old)
}

func FuzzDecodeEpisode(f *testing.F) { fuzzDecode[Episode](f, testEpisode()) }

func FuzzDecodeWeights(f *testing.F) { fuzzDecode[Weights](f, testWeights()) }

func FuzzDecodeDeadLetter(f *testing.F) { fuzzDecode[DeadLetter](f, testDeadLetter()) }
