package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/enum"
)

// ArchName names this family of networks in Weights.architecture.
const ArchName = "asyncwebrl-pointer-v1"

// FeaturesVersion changes whenever the featurizer computes something
// differently: weights trained on other features would read garbage, so
// architectures with different versions are incompatible.
const FeaturesVersion = 19

// Architecture fixes every shape of the network and of its features. It is
// serialised as JSON into Weights.architecture and into the ONNX metadata, so
// actors and learner featurize with the same settings as the weights they use.
type Architecture struct {
	Name            string `json:"name"`
	FeaturesVersion int    `json:"features_version"`
	Opset           int    `json:"opset"`

	// The thumbnail fed to the conv encoder (the wire frame area-averaged to
	// this size); both must be multiples of 4.
	FrameHeight int `json:"frame_height"`
	FrameWidth  int `json:"frame_width"`
	// Output channels of the two stride-2 convolutions and the width of the
	// visual embedding.
	Conv1Channels int `json:"conv1_channels"`
	Conv2Channels int `json:"conv2_channels"`
	VisualDim     int `json:"visual_dim"`

	// Hashed word vocabulary (bucket 0 is padding) and embedding width.
	Vocab    int `json:"vocab"`
	EmbedDim int `json:"embed_dim"`
	Hidden   int `json:"hidden"`

	// T: instruction words kept; E: elements kept; Lt: words per element
	// text; K: candidates (PressKeys, then texts: 85 = 21 + 64); Lc: words
	// per candidate.
	MaxInstrTokens int `json:"max_instr_tokens"`
	MaxElements    int `json:"max_elements"`
	ElemTokens     int `json:"elem_tokens"`
	MaxCandidates  int `json:"max_candidates"`
	CandTokens     int `json:"cand_tokens"`

	// Action types the policy chooses from, in the order of the type head's
	// logits: names of eventspb.ActionType without the "ACTION_TYPE_" prefix.
	ActionTypes []string `json:"action_types"`

	// PointSubdivisions is S: the point head refines its cell to one of
	// S x S sub-cells (an offset), so a point is one of G·S² positions
	// (default 4: 64x64 positions, about 2.5x3.3 CSS pixels of a MiniWoB++
	// page: grid-coordinate's 6-pixel points are hit, a glyph-exact text
	// selection not on every layout).
	PointSubdivisions int `json:"point_subdivisions"`
	// PointHidden is the width of a cell's row in the point head (G rows
	// of it: the head's cost), narrower than Hidden.
	PointHidden int `json:"point_hidden"`
	// Ablations are the inputs this policy does without (AblateVision,
	// AblateTaskSpecific; default none): zeroed by the featurizer.
	Ablations []Ablation `json:"ablations,omitempty"`

	// Descriptive only (rewritten by Normalize): what each feature column
	// means, and the graph's inputs and outputs.
	ElementFeatures   []string     `json:"element_features"`
	CandidateFeatures []string     `json:"candidate_features"`
	PairFeatures      []string     `json:"pair_features"`
	Inputs            []TensorSpec `json:"inputs"`
	Outputs           []TensorSpec `json:"outputs"`
}

// TensorSpec describes one graph input or output; Shape excludes the leading
// batch dimension.
type TensorSpec struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
}

// AllActionTypes are the types a policy may choose: the largest action set
// (GOTO and DRAG_AND_DROP are in none).
var AllActionTypes = ActionTypesOf(action.SetBidCoord)

// ActionTypesOf names the action types of set s as Architecture.ActionTypes
// does, in the action table's order.
func ActionTypesOf(s action.Set) []string {
	var out []string
	for _, t := range s.Types() {
		out = append(out, strings.TrimPrefix(t.String(), "ACTION_TYPE_"))
	}
	return out
}

// ArchitectureFor is DefaultArchitecture choosing from action set s.
func ArchitectureFor(s action.Set) Architecture {
	a := DefaultArchitecture()
	a.ActionTypes = ActionTypesOf(s)
	a.Normalize()
	return a
}

// DefaultArchitecture is small enough to train on two CPU cores in minutes:
// about 290k parameters. The thumbnail is 64x64 so that the point head's
// 16x16 cells are about 10 CSS pixels of a MiniWoB++ page.
func DefaultArchitecture() Architecture {
	a := Architecture{
		Name:            ArchName,
		FeaturesVersion: FeaturesVersion,
		Opset:           17,
		FrameHeight:     64,
		FrameWidth:      64,
		Conv1Channels:   8,
		Conv2Channels:   16,
		VisualDim:       32,
		Vocab:           2048,
		EmbedDim:        32,
		Hidden:          64,
		MaxInstrTokens:  32,
		MaxElements:     32,
		ElemTokens:      8,
		MaxCandidates:   85,
		CandTokens:      4,
		ActionTypes:     slices.Clone(AllActionTypes),

		PointSubdivisions: 4,
		PointHidden:       32,
	}
	a.Normalize()
	return a
}

// Normalize fills the descriptive fields from the shape fields.
func (a *Architecture) Normalize() {
	a.ElementFeatures = slices.Clone(elementFeatureNames)
	a.CandidateFeatures = slices.Clone(candidateFeatureNames)
	a.PairFeatures = slices.Clone(pairFeatureNames)
	a.Inputs = a.InputSpecs()
	a.Outputs = a.OutputSpecs()
}

// Validate rejects shapes the graph cannot be built with.
func (a *Architecture) Validate() error {
	if a.Name != ArchName {
		return fmt.Errorf("unable to use architecture %q: this build knows %q", a.Name, ArchName)
	}
	if a.FeaturesVersion != FeaturesVersion {
		return fmt.Errorf("unable to use features version %d: this build computes version %d", a.FeaturesVersion, FeaturesVersion)
	}
	if a.Opset < 13 || a.Opset > 17 {
		return fmt.Errorf("unable to use opset %d: want 13..17", a.Opset)
	}
	if a.FrameHeight < 4 || a.FrameWidth < 4 || a.FrameHeight%4 != 0 || a.FrameWidth%4 != 0 {
		return fmt.Errorf("unable to use frame %dx%d: both sides must be positive multiples of 4", a.FrameWidth, a.FrameHeight)
	}
	for _, d := range []struct {
		name string
		v    int
	}{
		{"conv1_channels", a.Conv1Channels}, {"conv2_channels", a.Conv2Channels}, {"visual_dim", a.VisualDim},
		{"embed_dim", a.EmbedDim}, {"hidden", a.Hidden}, {"max_instr_tokens", a.MaxInstrTokens},
		{"max_elements", a.MaxElements}, {"elem_tokens", a.ElemTokens}, {"max_candidates", a.MaxCandidates},
		{"cand_tokens", a.CandTokens}, {"point_hidden", a.PointHidden},
	} {
		if d.v < 1 || d.v > 4096 {
			return fmt.Errorf("unable to use %s = %d: want 1..4096", d.name, d.v)
		}
	}
	for _, x := range a.Ablations {
		if _, err := enum.Parse("ablation", string(x), Ablations...); err != nil {
			return fmt.Errorf("unable to use the architecture: %w", err)
		}
	}
	if a.PointSubdivisions < 1 || a.PointSubdivisions > 16 {
		return fmt.Errorf("unable to use point_subdivisions = %d: want 1..16", a.PointSubdivisions)
	}
	if a.Vocab < 2 || a.Vocab > 1<<20 {
		return fmt.Errorf("unable to use vocab %d: want 2..%d", a.Vocab, 1<<20)
	}
	if len(a.ActionTypes) == 0 {
		return errors.New("unable to use an architecture without action types")
	}
	seen := map[string]bool{}
	for _, t := range a.ActionTypes {
		if !slices.Contains(AllActionTypes, t) {
			return fmt.Errorf("unable to use action type %q: want one of %v", t, AllActionTypes)
		}
		if seen[t] {
			return fmt.Errorf("unable to use action type %q twice", t)
		}
		seen[t] = true
	}
	// NOOP keeps at least one type unmasked on a page with no elements.
	if !seen["NOOP"] {
		return errors.New("unable to use action types without NOOP: a page without elements would leave no valid action")
	}
	return nil
}

// NumTypes is A, the number of action types.
func (a *Architecture) NumTypes() int { return len(a.ActionTypes) }

// TypeIndex returns the type head's index of t, or -1.
func (a *Architecture) TypeIndex(t eventspb.ActionType) int {
	for i, name := range a.ActionTypes {
		if actionTypeOf(name) == t {
			return i
		}
	}
	return -1
}

// TypeAt returns the action type behind the type head's index i.
func (a *Architecture) TypeAt(i int) eventspb.ActionType {
	if i < 0 || i >= len(a.ActionTypes) {
		return eventspb.ActionType_ACTION_TYPE_UNSPECIFIED
	}
	return actionTypeOf(a.ActionTypes[i])
}

func actionTypeOf(name string) eventspb.ActionType {
	return eventspb.ActionType(eventspb.ActionType_value["ACTION_TYPE_"+name])
}

// UsesElement reports whether actions of type t take the element head's
// choice (and so contribute its log-prob): the action table's Element.
func UsesElement(t eventspb.ActionType) bool { return action.UsesElement(t) }

// UsesText reports whether actions of type t take the text head's choice:
// the action table's Text.
func UsesText(t eventspb.ActionType) bool { return action.UsesText(t) }

// UsesKey reports whether the text head's choice for type t is a key of
// the key row (a press) rather than a text.
func UsesKey(t eventspb.ActionType) bool { return t == eventspb.ActionType_ACTION_TYPE_PRESS }

// UsesPoint reports whether actions of type t take the point head's choice
// (row t of point_logits): the action table's Point.
func UsesPoint(t eventspb.ActionType) bool { return action.UsesPoint(t) }

// UsesToPoint reports whether actions of type t take the point head's
// destination row (row A of point_logits): the action table's ToPoint.
func UsesToPoint(t eventspb.ActionType) bool { return action.UsesToPoint(t) }

// Cells is G, the point head's cells: the second convolution's output
// positions, row-major, each covering an equal share of the wire frame.
func (a *Architecture) Cells() int { oh, ow := a.ConvOut(); return oh * ow }

// CellCenter returns cell g's centre in wire-frame pixels of a frame of
// fw x fh pixels (the thumbnail stretches the whole frame, so does the grid).
func (a *Architecture) CellCenter(g int, fw, fh float32) (x, y float32) {
	oh, ow := a.ConvOut()
	return (float32(g%ow) + 0.5) * fw / float32(ow), (float32(g/ow) + 0.5) * fh / float32(oh)
}

// PointEntropyScale weighs a point's entropy in Entropy (and so in the
// learner's entropy bonus): log E / log(G·S²), so that a point at its most
// uncertain counts as much as an element choice. Unscaled, a drag's two
// points (up to 2·log 4096 ≈ 16.6 nats against an element's log 32 ≈ 3.5)
// made the bonus pull the type head toward the point types: entropy rose
// from 6.4 to 6.8 over the first minute of a 5-minute run and the easy
// tier's held-out success stalled near 55% (95% before the point head).
func (a *Architecture) PointEntropyScale() float64 {
	return math.Log(float64(a.MaxElements)) / math.Log(float64(a.Cells()*a.Offsets()))
}

// Offsets is S², the sub-cells of a cell.
func (a *Architecture) Offsets() int { return a.PointSubdivisions * a.PointSubdivisions }

// PointIndex returns the position (cell·S² + sub-cell) holding the point
// (x, y) of a frame of fw x fh pixels, or -1 when the point is outside it.
func (a *Architecture) PointIndex(x, y, fw, fh float32) int {
	if fw <= 0 || fh <= 0 || x < 0 || y < 0 || x >= fw || y >= fh {
		return -1
	}
	oh, ow := a.ConvOut()
	S := a.PointSubdivisions
	px, py := min(int(x*float32(ow*S)/fw), ow*S-1), min(int(y*float32(oh*S)/fh), oh*S-1)
	return ((py/S)*ow+px/S)*S*S + (py%S)*S + px%S
}

// PointAt returns the centre of position p (cell·S² + sub-cell) in
// wire-frame pixels of a frame of fw x fh pixels.
func (a *Architecture) PointAt(p int, fw, fh float32) (x, y float32) {
	oh, ow := a.ConvOut()
	S := a.PointSubdivisions
	g, sub := p/(S*S), p%(S*S)
	px, py := (g%ow)*S+sub%S, (g/ow)*S+sub/S
	return (float32(px) + 0.5) * fw / float32(ow*S), (float32(py) + 0.5) * fh / float32(oh*S)
}

// TextRow returns the row of cand_logits that scores text candidates for an
// action of type t on element e: the key row E+1 for a press (which key,
// whatever the element), the element's row when the type uses an element,
// else the element-free row E.
func (a *Architecture) TextRow(t eventspb.ActionType, e int) int {
	switch {
	case UsesKey(t):
		return a.KeyRow()
	case UsesElement(t):
		return e
	}
	return a.MaxElements
}

// TextRows is the number of rows of cand_logits: one per element, the
// element-free row E and the key row E+1.
func (a *Architecture) TextRows() int { return a.MaxElements + 2 }

// KeyRow is the row of cand_logits that scores a press's key: only the
// key candidates (PressKeys) are unmasked there, and only there.
func (a *Architecture) KeyRow() int { return a.MaxElements + 1 }

// ConvOut returns the spatial size after the two stride-2 convolutions.
func (a *Architecture) ConvOut() (h, w int) { return a.FrameHeight / 4, a.FrameWidth / 4 }

// Graph input names, in the order of InputSpecs.
const (
	InFrame          = "frame"
	InInstrTokens    = "instr_tokens"
	InInstrWeights   = "instr_weights"
	InElemFeats      = "elem_feats"
	InElemTokens     = "elem_tokens"
	InElemTokWeights = "elem_tok_weights"
	InElemWeights    = "elem_weights"
	InElemTypeMask   = "elem_type_mask"
	InCandFeats      = "cand_feats"
	InCandTokens     = "cand_tokens"
	InCandTokWeights = "cand_tok_weights"
	InCandMask       = "cand_mask"
	InTypeMask       = "type_mask"
	InPairFeats      = "pair_feats"
	InCellElems      = "cell_elems"
)

// Graph output names, in the order of OutputSpecs.
const (
	OutTypeLogits = "type_logits"
	OutElemLogits = "elem_logits"
	OutCandLogits = "cand_logits"
	OutValue      = "value"
	// OutPointLogits comes last so that the first four keep their places.
	OutPointLogits = "point_logits"
	// OutPointOffsets scores the sub-cells of every cell (shared by the
	// point rows: where in a cell to aim is the cell's matter).
	OutPointOffsets = "point_offsets"
)

// InputSpecs lists the graph inputs (per sample, without the batch dim).
func (a *Architecture) InputSpecs() []TensorSpec {
	A, E, K, R := int64(a.NumTypes()), int64(a.MaxElements), int64(a.MaxCandidates), int64(a.TextRows())
	f, i := "float32", "int64"
	return []TensorSpec{
		{InFrame, f, []int64{3, int64(a.FrameHeight), int64(a.FrameWidth)}},
		{InInstrTokens, i, []int64{int64(a.MaxInstrTokens)}},
		{InInstrWeights, f, []int64{int64(a.MaxInstrTokens)}},
		{InElemFeats, f, []int64{E, int64(len(elementFeatureNames))}},
		{InElemTokens, i, []int64{E, int64(a.ElemTokens)}},
		{InElemTokWeights, f, []int64{E, int64(a.ElemTokens)}},
		{InElemWeights, f, []int64{E}},
		{InElemTypeMask, f, []int64{A, E}},
		{InCandFeats, f, []int64{K, int64(len(candidateFeatureNames))}},
		{InCandTokens, i, []int64{K, int64(a.CandTokens)}},
		{InCandTokWeights, f, []int64{K, int64(a.CandTokens)}},
		{InCandMask, f, []int64{R, K}},
		{InTypeMask, f, []int64{A}},
		{InPairFeats, f, []int64{R, K, int64(len(pairFeatureNames))}},
		{InCellElems, f, []int64{int64(a.Cells()), E}},
	}
}

// OutputSpecs lists the graph outputs (per sample, without the batch dim).
func (a *Architecture) OutputSpecs() []TensorSpec {
	A, E, K, R := int64(a.NumTypes()), int64(a.MaxElements), int64(a.MaxCandidates), int64(a.TextRows())
	return []TensorSpec{
		{OutTypeLogits, "float32", []int64{A}},
		{OutElemLogits, "float32", []int64{A, E}},
		{OutCandLogits, "float32", []int64{R, K}},
		{OutValue, "float32", []int64{1}},
		{OutPointLogits, "float32", []int64{A + 1, int64(a.Cells())}},
		{OutPointOffsets, "float32", []int64{int64(a.Cells()), int64(a.Offsets())}},
	}
}

// JSON returns the architecture as stored in Weights.architecture.
func (a *Architecture) JSON() (string, error) {
	c := *a
	c.Normalize()
	b, err := json.Marshal(&c)
	if err != nil {
		return "", fmt.Errorf("unable to encode architecture: %w", err)
	}
	return string(b), nil
}

// ParseArchitecture reads and validates Weights.architecture.
func ParseArchitecture(s string) (Architecture, error) {
	var a Architecture
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return Architecture{}, fmt.Errorf("unable to decode architecture: %w", err)
	}
	if err := a.Validate(); err != nil {
		return Architecture{}, err
	}
	a.Normalize()
	return a, nil
}

// SameShapes reports whether b's features and outputs are interchangeable
// with a's (what a model swap needs).
func (a *Architecture) SameShapes(b *Architecture) bool {
	x, y := *a, *b
	x.Normalize()
	y.Normalize()
	xs, err1 := json.Marshal(&x)
	ys, err2 := json.Marshal(&y)
	return err1 == nil && err2 == nil && string(xs) == string(ys)
}
