package analytics

import (
	"hash/crc32"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// TableFrames holds wire frames by content hash
// (migrations/0008_frames.sql).
const TableFrames = "frames"

// RowsOption changes what NewRows keeps.
type RowsOption func(*Rows)

// WithFrames keeps observation frames in the frames table: every frame of
// a greedy (evaluation) episode, and those of one in sampleEvery of the
// other episodes (0: greedy ones only). Default: no frames are kept, only
// their size and sha256 in obs.
func WithFrames(sampleEvery int) RowsOption {
	return func(r *Rows) { r.frameSample = max(0, sampleEvery) }
}

// FrameSampled reports whether the frames of a non-greedy episode are kept
// when one in every episodes is: a hash of the episode id, so that every
// recorder of a group, and every step of the episode, agree.
func FrameSampled(episodeID string, every int) bool {
	return every > 0 && crc32.ChecksumIEEE([]byte(episodeID))%uint32(every) == 0
}

// keepsFrame reports whether o's frame goes to the frames table.
func (r *Rows) keepsFrame(o *eventspb.Observation) bool {
	if r.frameSample < 0 || len(o.GetFrame()) == 0 {
		return false
	}
	return ObservationKind(o) == KindGreedy || FrameSampled(o.GetEnvelope().GetEpisodeId(), r.frameSample)
}

// addFrame buffers o's frame unless the buffered block already holds it
// (a page that did not change between steps): the table is keyed by hash.
func (r *Rows) addFrame(o *eventspb.Observation, rec *Record) {
	if !r.keepsFrame(o) {
		return
	}
	if r.frames.rows == 0 {
		clear(r.frameSeen)
	}
	h := sha256Hex(o.GetFrame())
	if _, dup := r.frameSeen[h]; dup {
		return
	}
	r.frameSeen[h] = struct{}{}
	r.frames.add(o, rec)
}

func newFramesTable() *table[obs] {
	return newTable(TableFrames, fields(
		str("hash", func(o obs) string { return sha256Hex(o.GetFrame()) }),
		runOf[obs](),
	),
		fields(
			str("format", obs.GetFrameFormat),
			val("width", obs.GetWidth),
			val("height", obs.GetHeight),
			str("bytes", func(o obs) string { return string(o.GetFrame()) }),
			str("episode_id", func(o obs) string { return o.GetEnvelope().GetEpisodeId() }),
			recordedAt[obs](),
		))
}

// elementBoxes are the elements' boxes as [x, y, w, h] (obs.element_boxes).
func elementBoxes(o obs) [][]float32 {
	out := make([][]float32, len(o.GetElements()))
	for i, e := range o.GetElements() {
		b := e.GetBox()
		out[i] = []float32{b.GetX(), b.GetY(), b.GetW(), b.GetH()}
	}
	return out
}

func elementBids(o obs) []string {
	out := make([]string, len(o.GetElements()))
	for i, e := range o.GetElements() {
		out[i] = e.GetBid()
	}
	return out
}
