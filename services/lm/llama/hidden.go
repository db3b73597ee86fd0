package llama

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/x448/float16"
)

// HiddenFormat names the wire form of tapped hidden states
// (Action.lm.frozen_sha256's blob): float16, little-endian, row-major
// [rows][width]. Half precision halves the blob (SmolLM2: 1.1 KB a token)
// and keeps 11 significant bits, far below the noise of a sampled step's
// log-prob (services/learner's TestLMLogProbsMatchTheActor bounds the
// difference).
const HiddenFormat = "f16le"

// EncodeHidden is data ([rows][width] flat) in HiddenFormat. A value half
// precision cannot hold (beyond ±65504, or not finite) is an error: the
// learner would train on a wrong input, so the step goes without.
func EncodeHidden(data []float32, width int) ([]byte, error) {
	if width <= 0 || len(data)%width != 0 {
		return nil, fmt.Errorf("unable to encode %d hidden values in rows of %d", len(data), width)
	}
	out := make([]byte, 2*len(data))
	for i, v := range data {
		if math.IsNaN(float64(v)) || math.Abs(float64(v)) > 65504 {
			return nil, fmt.Errorf("unable to encode hidden value %d (%v) in half precision", i, v)
		}
		binary.LittleEndian.PutUint16(out[2*i:], float16.Fromfloat32(v).Bits())
	}
	return out, nil
}

// DecodeHidden reads rows×width values in HiddenFormat.
func DecodeHidden(b []byte, rows, width int) ([]float32, error) {
	if rows <= 0 || width <= 0 || len(b) != 2*rows*width {
		return nil, fmt.Errorf("unable to decode hidden states: %d bytes for %d rows of %d", len(b), rows, width)
	}
	out := make([]float32, rows*width)
	for i := range out {
		out[i] = float16.Frombits(binary.LittleEndian.Uint16(b[2*i:])).Float32()
	}
	return out, nil
}
