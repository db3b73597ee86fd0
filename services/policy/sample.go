package policy

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
)

// PressKey is the key a press without one sends (to the chosen element),
// as BrowserGym's press and the events before features v18 have it.
const PressKey = "Enter"

// PressKeys are the keys the policy presses (the key row's candidates,
// features v18): the keys of forms and lists, the arrows of sliders and
// carets, and the editing combinations (select all, copy, cut, paste,
// the start and end of a text). Any other combination is the action
// table's (press key_comb) and not the policy's.
var PressKeys = []string{
	"Enter", "Tab", "Shift+Tab", "Escape", "Backspace", "Delete", "Space",
	"ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown",
	"Control+a", "Control+c", "Control+x", "Control+v", "Control+Home", "Control+End",
}

// maskedBelow marks a logit as masked: the additive mask puts masked
// entries near -1e9, and no trained logit gets anywhere close.
const maskedBelow = -1e8

// ErrNotRepresentable means a recorded action cannot be expressed with the
// policy's heads for its observation (a bid not among the kept elements, a
// free text that is not a candidate, a type the architecture lacks, or a
// choice the masks forbid). The learner skips such actions for policy-
// gradient terms.
var ErrNotRepresentable = errors.New("action not representable by the policy")

// Unrepresentable is the kind of an ErrNotRepresentable, worded for an
// audit's table.
type Unrepresentable string

// The kinds of ErrNotRepresentable.
const (
	NoHeadForType    Unrepresentable = "no head for the type"
	ElementNotKept   Unrepresentable = "its element is not among the kept ones"
	TextNotCandidate Unrepresentable = "its text is not a candidate"
	TypeMasked       Unrepresentable = "the type is masked on the page"
	TargetMasked     Unrepresentable = "the type may not target that element"
	TextMasked       Unrepresentable = "the text is masked for that element"
	PointOutside     Unrepresentable = "its point is outside the frame"
	KeyNotPressable  Unrepresentable = "the key is not one of the policy's keys"
	ScrollNotDown    Unrepresentable = "the scroll head turns the wheel down only"
	NotOneMore       Unrepresentable = "a select of several options is not the selection plus one"
)

// NotRepresentableError is an ErrNotRepresentable with its kind; Detail
// says it of the action at hand.
type NotRepresentableError struct {
	Kind   Unrepresentable
	Detail string
}

func (e *NotRepresentableError) Error() string { return ErrNotRepresentable.Error() + ": " + e.Detail }

func (e *NotRepresentableError) Unwrap() error { return ErrNotRepresentable }

func notRepresentable(kind Unrepresentable, format string, args ...any) error {
	return &NotRepresentableError{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// Choice is an action as head indices: Type indexes the type head; Element
// (-1 when unused) the element head's row for that type; Candidate (-1 when
// unused) the text head's row Arch.TextRow(type, Element); Point (-1 when
// unused) a position of the point head's row for the type (cell·S² +
// sub-cell: the cell, then its offset), ToPoint (-1 when unused) one of its
// destination row A.
type Choice struct {
	Type      int
	Element   int
	Candidate int
	Point     int
	ToPoint   int
}

// noChoice is a Choice of type t with every other head unused.
func noChoice(t int) Choice {
	return Choice{Type: t, Element: -1, Candidate: -1, Point: -1, ToPoint: -1}
}

// Decision is a sampled action with its log-prob and value.
type Decision struct {
	Choice
	// Action has type, bid, text, text_token, key, x/y, delta_y, raw,
	// log_prob and value set; the caller adds the envelope, policy name and
	// version, and latency.
	Action  *eventspb.Action
	LogProb float64
	Value   float64
}

// LogSoftmax returns the log-probabilities of logits, in float64 (the
// policy's heads here; the language model's tests and tools too).
func LogSoftmax(logits []float32) []float64 {
	m := math.Inf(-1)
	for _, x := range logits {
		m = math.Max(m, float64(x))
	}
	var s float64
	for _, x := range logits {
		s += math.Exp(float64(x) - m)
	}
	lse := m + math.Log(s)
	out := make([]float64, len(logits))
	for i, x := range logits {
		out[i] = float64(x) - lse
	}
	return out
}

// pick samples an index from the log-probs, or takes the argmax when greedy
// (ties: the lowest index). Masked entries are never picked.
func pick(logits []float32, rng *rand.Rand, greedy bool) (int, error) {
	best := -1
	for i, x := range logits {
		if x > maskedBelow && (best < 0 || x > logits[best]) {
			best = i
		}
	}
	if best < 0 {
		return -1, errors.New("every choice is masked")
	}
	if greedy || rng == nil {
		return best, nil
	}
	lp := LogSoftmax(logits)
	u := rng.Float64()
	var c float64
	last := best
	for i, l := range lp {
		if logits[i] <= maskedBelow {
			continue
		}
		c += math.Exp(l)
		last = i
		if u < c {
			return i, nil
		}
	}
	return last, nil // rounding left u above the total
}

// elemRow returns the element logits for type index t.
func (a *Architecture) elemRow(out *Output, t int) []float32 {
	E := a.MaxElements
	return out.ElemLogits[t*E : (t+1)*E]
}

// pointRow returns the point logits of row row: a type index, or NumTypes
// for a drag's release point.
func (a *Architecture) pointRow(out *Output, row int) []float32 {
	G := a.Cells()
	return out.PointLogits[row*G : (row+1)*G]
}

// offsetRow returns the sub-cell logits of cell g.
func (a *Architecture) offsetRow(out *Output, g int) []float32 {
	S2 := a.Offsets()
	return out.PointOffsets[g*S2 : (g+1)*S2]
}

// pickPoint draws a position of point row row: a cell, then its sub-cell.
func (a *Architecture) pickPoint(out *Output, row int, rng *rand.Rand, greedy bool) (int, error) {
	g, err := pick(a.pointRow(out, row), rng, greedy)
	if err != nil {
		return -1, err
	}
	sub, err := pick(a.offsetRow(out, g), rng, greedy)
	if err != nil {
		return -1, err
	}
	return g*a.Offsets() + sub, nil
}

// pointLogProb is log π(cell) + log π(sub-cell | cell) of position p on
// point row row.
func (a *Architecture) pointLogProb(out *Output, row, p int) (float64, error) {
	if p < 0 || p >= a.Cells()*a.Offsets() {
		return 0, fmt.Errorf("%w: point %d is out of range", ErrNotRepresentable, p)
	}
	g, sub := p/a.Offsets(), p%a.Offsets()
	return LogSoftmax(a.pointRow(out, row))[g] + LogSoftmax(a.offsetRow(out, g))[sub], nil
}

// pointEntropy is H(cell) + Σ_g π(g)·H(sub-cell | g) of point row row.
func (a *Architecture) pointEntropy(out *Output, row int) float64 {
	lp := LogSoftmax(a.pointRow(out, row))
	h := entropyOf(lp)
	for g, l := range lp {
		if p := math.Exp(l); p > 0 {
			h += p * entropyOf(LogSoftmax(a.offsetRow(out, g)))
		}
	}
	return h
}

// candRow returns the text logits of row row (see TextRow).
func (a *Architecture) candRow(out *Output, row int) []float32 {
	K := a.MaxCandidates
	return out.CandLogits[row*K : (row+1)*K]
}

// Sample draws an action from the outputs (greedy, or a nil rng: the argmax
// of each head),
// type first, then the element if the type uses one, then the text
// candidate if the type uses text, conditioned on the element through the
// text head's row.
func (a *Architecture) Sample(f *Features, out *Output, rng *rand.Rand, greedy bool) (*Decision, error) {
	if err := a.checkOutput(out); err != nil {
		return nil, err
	}
	t, err := pick(out.TypeLogits, rng, greedy)
	if err != nil {
		return nil, fmt.Errorf("unable to sample the action type: %w", err)
	}
	c := noChoice(t)
	typ := a.TypeAt(c.Type)
	if UsesElement(typ) {
		if c.Element, err = pick(a.elemRow(out, c.Type), rng, greedy); err != nil {
			return nil, fmt.Errorf("unable to sample the element: %w", err)
		}
	}
	if UsesText(typ) {
		if c.Candidate, err = pick(a.candRow(out, a.TextRow(typ, c.Element)), rng, greedy); err != nil {
			return nil, fmt.Errorf("unable to sample the text: %w", err)
		}
	}
	if UsesPoint(typ) {
		if c.Point, err = a.pickPoint(out, c.Type, rng, greedy); err != nil {
			return nil, fmt.Errorf("unable to sample the point: %w", err)
		}
	}
	if UsesToPoint(typ) {
		if c.ToPoint, err = a.pickPoint(out, a.NumTypes(), rng, greedy); err != nil {
			return nil, fmt.Errorf("unable to sample the release point: %w", err)
		}
	}
	lp, err := a.LogProb(out, c)
	if err != nil {
		return nil, err
	}
	act, err := a.ActionOf(f, c)
	if err != nil {
		return nil, err
	}
	act.LogProb = lp
	act.Value = float64(out.Value)
	return &Decision{Choice: c, Action: act, LogProb: lp, Value: float64(out.Value)}, nil
}

// LogProb is the joint log-probability of a choice (see doc.go):
//
//	log π(type) + [type uses element]·log π(element | type)
//	            + [type uses text]·log π(candidate | row(type, element))
//	            + [type uses a point]·log π(position | point row type)
//	            + [type uses a release point]·log π(position | point row A)
//
// where a position's log-prob is its cell's plus its sub-cell's given the
// cell.
//
// each a log-softmax over the masked logits of its head. Choosing a masked
// entry is ErrNotRepresentable.
func (a *Architecture) LogProb(out *Output, c Choice) (float64, error) {
	if err := a.checkOutput(out); err != nil {
		return 0, err
	}
	if c.Type < 0 || c.Type >= a.NumTypes() || out.TypeLogits[c.Type] <= maskedBelow {
		return 0, fmt.Errorf("%w: type %d is out of range or masked", ErrNotRepresentable, c.Type)
	}
	lp := LogSoftmax(out.TypeLogits)[c.Type]
	typ := a.TypeAt(c.Type)
	if UsesElement(typ) {
		row := a.elemRow(out, c.Type)
		if c.Element < 0 || c.Element >= len(row) || row[c.Element] <= maskedBelow {
			return 0, fmt.Errorf("%w: element %d is out of range or masked for %s", ErrNotRepresentable, c.Element, typ)
		}
		lp += LogSoftmax(row)[c.Element]
	}
	if UsesText(typ) {
		row := a.candRow(out, a.TextRow(typ, c.Element))
		if c.Candidate < 0 || c.Candidate >= len(row) || row[c.Candidate] <= maskedBelow {
			return 0, fmt.Errorf("%w: candidate %d is out of range or masked", ErrNotRepresentable, c.Candidate)
		}
		lp += LogSoftmax(row)[c.Candidate]
	}
	for _, p := range []struct {
		uses      bool
		row, cell int
	}{{UsesPoint(typ), c.Type, c.Point}, {UsesToPoint(typ), a.NumTypes(), c.ToPoint}} {
		if !p.uses {
			continue
		}
		l, err := a.pointLogProb(out, p.row, p.cell)
		if err != nil {
			return 0, err
		}
		lp += l
	}
	return lp, nil
}

func (a *Architecture) checkOutput(out *Output) error {
	A, E, K, G := a.NumTypes(), a.MaxElements, a.MaxCandidates, a.Cells()
	if out == nil || len(out.TypeLogits) != A || len(out.ElemLogits) != A*E || len(out.CandLogits) != a.TextRows()*K ||
		len(out.PointLogits) != (A+1)*G || len(out.PointOffsets) != G*a.Offsets() {
		return errors.New("unable to use outputs: shapes do not match the architecture")
	}
	return nil
}

// ActionOf builds the action fields of a choice on the featurized
// observation: CLICK bid; FILL and SELECT_OPTION bid + text + text_token;
// PRESS bid + key + text_token (a candidate of the key row); SCROLL bid + x/y at the element's centre +
// delta_y half a frame down; SEND_MSG_TO_USER text + text_token.
func (a *Architecture) ActionOf(f *Features, c Choice) (*eventspb.Action, error) {
	typ := a.TypeAt(c.Type)
	if typ == eventspb.ActionType_ACTION_TYPE_UNSPECIFIED {
		return nil, fmt.Errorf("%w: type index %d", ErrNotRepresentable, c.Type)
	}
	act := &eventspb.Action{Type: typ}
	if UsesElement(typ) {
		if c.Element < 0 || c.Element >= len(f.BIDs) {
			return nil, fmt.Errorf("%w: element %d of %d", ErrNotRepresentable, c.Element, len(f.BIDs))
		}
		act.Bid = f.BIDs[c.Element]
	}
	if UsesText(typ) {
		if c.Candidate < 0 || c.Candidate >= len(f.Candidates) {
			return nil, fmt.Errorf("%w: candidate %d of %d", ErrNotRepresentable, c.Candidate, len(f.Candidates))
		}
		switch key := c.Candidate < f.Keys; {
		case key != UsesKey(typ):
			return nil, fmt.Errorf("%w: candidate %d is a key for %s, or a text for a press", ErrNotRepresentable, c.Candidate, typ)
		case key:
			act.Key = f.Candidates[c.Candidate]
		default:
			act.Text = f.Candidates[c.Candidate]
		}
		// A listbox's select adds its option to those selected (BrowserGym's
		// select_option of them all): one choice a step, as a person's
		// ctrl-click.
		if typ == eventspb.ActionType_ACTION_TYPE_SELECT_OPTION && c.Element < len(f.Selected) && len(f.Selected[c.Element]) > 0 {
			act.Options = append(slices.Clone(f.Selected[c.Element]), act.Text)
			if containsFold(f.Selected[c.Element], act.Text) {
				act.Options = slices.Clone(f.Selected[c.Element])
			}
			if len(act.Options) < 2 {
				act.Options = nil
			} else {
				act.Text = act.Options[0] // as the event has it; text_token names the one added
			}
		}
		k := uint32(c.Candidate)
		act.TextToken = &k
	}
	for _, p := range []struct {
		uses bool
		cell int
		x, y *float32
	}{{UsesPoint(typ), c.Point, &act.X, &act.Y}, {UsesToPoint(typ), c.ToPoint, &act.ToX, &act.ToY}} {
		if !p.uses {
			continue
		}
		if p.cell < 0 || p.cell >= a.Cells()*a.Offsets() {
			return nil, fmt.Errorf("%w: point %d of %d", ErrNotRepresentable, p.cell, a.Cells()*a.Offsets())
		}
		*p.x, *p.y = a.PointAt(p.cell, f.FrameWidth, f.FrameHeight)
	}
	switch typ {
	case eventspb.ActionType_ACTION_TYPE_SCROLL:
		if c.Element >= len(f.Centers) {
			return nil, fmt.Errorf("%w: element %d has no box", ErrNotRepresentable, c.Element)
		}
		act.X, act.Y = f.Centers[c.Element][0], f.Centers[c.Element][1]
		act.DeltaY = f.FrameHeight / 2
	}
	raw, err := action.Format(act)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotRepresentable, err)
	}
	act.Raw = raw
	return act, nil
}

// ChoiceOf maps a recorded action back to head indices on the featurized
// observation it was chosen from: the type by its ActionType, the element by
// bid, the candidate by text_token when it still names the same text, else
// by text; a choice the masks forbid is ErrNotRepresentable. A demonstration's action gets the same treatment, so behaviour
// cloning and the PPO ratio use one definition.
func (a *Architecture) ChoiceOf(f *Features, act *eventspb.Action) (Choice, error) {
	c := noChoice(a.TypeIndex(act.GetType()))
	if c.Type < 0 {
		return c, notRepresentable(NoHeadForType, "type %s is not in the architecture", act.GetType())
	}
	typ := act.GetType()
	if UsesElement(typ) {
		for e, bid := range f.BIDs {
			if bid == act.GetBid() {
				c.Element = e
				break
			}
		}
		if c.Element < 0 {
			return c, notRepresentable(ElementNotKept, "bid %q is not among the %d kept elements", act.GetBid(), len(f.BIDs))
		}
	}
	if typ == eventspb.ActionType_ACTION_TYPE_PRESS {
		// The key is a candidate of the key row: another would clone or
		// credit a different action.
		k := cmp.Or(act.GetKey(), PressKey)
		if c.Candidate = slices.Index(f.Candidates[:f.Keys], k); c.Candidate < 0 {
			return c, notRepresentable(KeyNotPressable, "key %q is not one of the %d keys", k, f.Keys)
		}
	}
	if typ == eventspb.ActionType_ACTION_TYPE_SCROLL && (act.GetDeltaY() < 0 || act.GetDeltaX() != 0) {
		// ActionOf scrolls half a frame down.
		return c, notRepresentable(ScrollNotDown, "a scroll by (%g, %g)", act.GetDeltaX(), act.GetDeltaY())
	}
	if opts := act.GetOptions(); typ == eventspb.ActionType_ACTION_TYPE_SELECT_OPTION && len(opts) > 1 {
		// Several options: the selection kept plus the one chosen now.
		var sel []string
		if c.Element < len(f.Selected) {
			sel = f.Selected[c.Element]
		}
		var added []string
		for _, o := range opts {
			if !containsFold(sel, o) {
				added = append(added, o)
			}
		}
		if tt := int(act.GetTextToken()); len(added) == 0 && act.TextToken != nil && tt >= f.Keys && tt < len(f.Candidates) && containsFold(opts, f.Candidates[tt]) {
			// The policy chose an option already selected (ActionOf kept
			// the selection as it was): text_token says which.
			added = []string{f.Candidates[tt]}
		}
		if len(added) != 1 || slices.ContainsFunc(sel, func(s string) bool { return !containsFold(opts, s) }) {
			return c, notRepresentable(NotOneMore, "options %q on the selection %q", opts, sel)
		}
		act = &eventspb.Action{Type: typ, Bid: act.GetBid(), Text: added[0]}
	}
	if UsesText(typ) && typ != eventspb.ActionType_ACTION_TYPE_PRESS {
		texts := f.Candidates[f.Keys:]
		if tt := int(act.GetTextToken()); act.TextToken != nil && tt >= f.Keys && tt < len(f.Candidates) && f.Candidates[act.GetTextToken()] == act.GetText() {
			c.Candidate = int(act.GetTextToken())
		} else {
			c.Candidate = slices.Index(texts, act.GetText())
			if c.Candidate < 0 {
				c.Candidate = slices.IndexFunc(texts, func(s string) bool { return strings.EqualFold(s, act.GetText()) })
			}
			if c.Candidate >= 0 {
				c.Candidate += f.Keys
			}
		}
		if c.Candidate < 0 {
			return c, notRepresentable(TextNotCandidate, "text %q is not a candidate", act.GetText())
		}
	}
	// A point is the position (cell and sub-cell) that holds it: the
	// policy acts at the sub-cell's centre, where a recorded point lands
	// when it came from the point head, and within half a sub-cell of it
	// otherwise.
	if UsesPoint(typ) {
		if c.Point = a.PointIndex(act.GetX(), act.GetY(), f.FrameWidth, f.FrameHeight); c.Point < 0 {
			return c, notRepresentable(PointOutside, "(%g, %g) is outside the %gx%g frame", act.GetX(), act.GetY(), f.FrameWidth, f.FrameHeight)
		}
	}
	if UsesToPoint(typ) {
		if c.ToPoint = a.PointIndex(act.GetToX(), act.GetToY(), f.FrameWidth, f.FrameHeight); c.ToPoint < 0 {
			return c, notRepresentable(PointOutside, "(%g, %g) is outside the %gx%g frame", act.GetToX(), act.GetToY(), f.FrameWidth, f.FrameHeight)
		}
	}
	// The masks: a choice the graph gives no probability is not the
	// policy's either (the learner counts it at ingest, not at the update).
	switch E := a.MaxElements; {
	case f.TypeMask[c.Type] != 1:
		return c, notRepresentable(TypeMasked, "type %s is masked on this page", typ)
	case UsesElement(typ) && f.ElemTypeMask[c.Type*E+c.Element] != 1:
		return c, notRepresentable(TargetMasked, "%s may not target bid %q", typ, act.GetBid())
	case UsesText(typ) && f.CandMask[a.TextRow(typ, c.Element)*a.MaxCandidates+c.Candidate] != 1:
		return c, notRepresentable(TextMasked, "candidate %d is masked", c.Candidate)
	}
	return c, nil
}

// Entropy is the entropy of the joint action distribution the outputs
// define, with each point's term weighed by PointEntropyScale (the
// learner's entropy bonus uses the same definition):
//
//	H = H(type) + Σ_t π(t)·( [t uses element]·H(element | t)
//	    + [t uses text]·( [t uses element]·Σ_e π(e | t)·H(text | row e)
//	                      + [t uses no element]·H(text | row E) )
//	    + w·[t uses a point]·H(position | point row t)
//	    + w·[t uses a release point]·H(position | point row A) ),  w = PointEntropyScale
//
// with H(position | row) = H(cell) + Σ_g π(g)·H(sub-cell | g).
func (a *Architecture) Entropy(out *Output) (float64, error) {
	if err := a.checkOutput(out); err != nil {
		return 0, err
	}
	lpT := LogSoftmax(out.TypeLogits)
	h := entropyOf(lpT)
	candH := func(row int) float64 { return entropyOf(LogSoftmax(a.candRow(out, row))) }
	for t, l := range lpT {
		pt := math.Exp(l)
		if pt == 0 {
			continue
		}
		typ := a.TypeAt(t)
		switch {
		case UsesElement(typ):
			lpE := LogSoftmax(a.elemRow(out, t))
			h += pt * entropyOf(lpE)
			if UsesText(typ) && UsesKey(typ) {
				h += pt * candH(a.KeyRow()) // a press's key: one row, whatever the element
			} else if UsesText(typ) {
				for e, le := range lpE {
					if pe := math.Exp(le); pe > 0 {
						h += pt * pe * candH(e)
					}
				}
			}
		case UsesText(typ):
			h += pt * candH(a.MaxElements)
		}
		if UsesPoint(typ) {
			h += pt * a.PointEntropyScale() * a.pointEntropy(out, t)
		}
		if UsesToPoint(typ) {
			h += pt * a.PointEntropyScale() * a.pointEntropy(out, a.NumTypes())
		}
	}
	return h, nil
}

// entropyOf returns -Σ p·log p of log-probabilities (0·log 0 = 0).
func entropyOf(lp []float64) float64 {
	var h float64
	for _, l := range lp {
		if p := math.Exp(l); p > 0 {
			h -= p * l
		}
	}
	return h
}

// sameAction reports whether two actions do the same thing: type, target
// element, text and points.
func sameAction(a, b *eventspb.Action) bool {
	return a.GetType() == b.GetType() && a.GetBid() == b.GetBid() && a.GetText() == b.GetText() &&
		a.GetX() == b.GetX() && a.GetY() == b.GetY() && a.GetToX() == b.GetToX() && a.GetToY() == b.GetToY()
}

// GreedyAvoiding is greedy decoding that takes none of the actions in
// avoid: the action just taken on the same page, and the ones already
// taken from the same page state in the episode. A deterministic policy
// that comes back to a state it acted on repeats what it did there
// forever: its argmax did not change the page (a field filled again), or
// a short cycle returns to the state (fill, click the field, fill; tick a
// box, untick it) until the step budget ends. It returns the most likely
// joint choice (over each type's three best elements and their three best
// texts) that is not in avoid, and the argmax itself when everything
// possible is avoided. With avoid empty it is Sample's greedy decision.
func (a *Architecture) GreedyAvoiding(f *Features, out *Output, avoid []*eventspb.Action) (*Decision, error) {
	avoided := func(act *eventspb.Action) bool {
		return slices.ContainsFunc(avoid, func(b *eventspb.Action) bool { return b != nil && sameAction(act, b) })
	}
	d, err := a.Sample(f, out, nil, true)
	if err != nil || !avoided(d.Action) {
		return d, err
	}
	const k = 3
	topK := func(logits []float32) []int {
		var idx []int
		for range k {
			best := -1
			for i, x := range logits {
				if x > maskedBelow && !slices.Contains(idx, i) && (best < 0 || x > logits[best]) {
					best = i
				}
			}
			if best >= 0 {
				idx = append(idx, best)
			}
		}
		return idx
	}
	var best *Decision
	for t, x := range out.TypeLogits {
		if x <= maskedBelow {
			continue
		}
		typ := a.TypeAt(t)
		elems := []int{-1}
		if UsesElement(typ) {
			elems = topK(a.elemRow(out, t))
		}
		// A point: each of the three best cells at its best sub-cell.
		topPoints := func(row int) []int {
			var ps []int
			for _, g := range topK(a.pointRow(out, row)) {
				if sub, err := pick(a.offsetRow(out, g), nil, true); err == nil {
					ps = append(ps, g*a.Offsets()+sub)
				}
			}
			return ps
		}
		points, toPoints := []int{-1}, []int{-1}
		if UsesPoint(typ) {
			points = topPoints(t)
		}
		if UsesToPoint(typ) {
			toPoints = topPoints(a.NumTypes())
		}
		for _, e := range elems {
			cands := []int{-1}
			if UsesText(typ) {
				cands = topK(a.candRow(out, a.TextRow(typ, e)))
			}
			for _, ch := range choicesOf(t, e, cands, points, toPoints) {
				lp, err := a.LogProb(out, ch)
				if err != nil || (best != nil && lp <= best.LogProb) {
					continue
				}
				act, err := a.ActionOf(f, ch)
				if err != nil || avoided(act) {
					continue
				}
				act.LogProb, act.Value = lp, float64(out.Value)
				best = &Decision{Choice: ch, Action: act, LogProb: lp, Value: float64(out.Value)}
			}
		}
	}
	if best == nil {
		return d, nil // nothing else is possible: repeat
	}
	return best, nil
}

// choicesOf lists the choices of type t on element e with each of the
// candidates, points and release points (-1: the head is unused).
func choicesOf(t, e int, cands, points, toPoints []int) []Choice {
	out := make([]Choice, 0, len(cands)*len(points)*len(toPoints))
	for _, c := range cands {
		for _, p := range points {
			for _, q := range toPoints {
				out = append(out, Choice{Type: t, Element: e, Candidate: c, Point: p, ToPoint: q})
			}
		}
	}
	return out
}

// containsFold reports whether set holds s, ignoring case (options and
// candidates are matched so).
func containsFold(set []string, s string) bool {
	return slices.ContainsFunc(set, func(o string) bool { return strings.EqualFold(o, s) })
}
