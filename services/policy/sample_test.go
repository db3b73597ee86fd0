package policy

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// handOutput builds outputs for a: type logits as given (others masked),
// element and candidate logits zero except masked where the features mask.
func handOutput(a *Architecture, f *Features, typeLogits map[eventspb.ActionType]float32) *Output {
	A, E, K, G := a.NumTypes(), a.MaxElements, a.MaxCandidates, a.Cells()
	o := &Output{TypeLogits: make([]float32, A), ElemLogits: make([]float32, A*E), CandLogits: make([]float32, a.TextRows()*K),
		PointLogits: make([]float32, (A+1)*G), PointOffsets: make([]float32, G*a.Offsets()), Value: 0.25}
	for t := range A {
		o.TypeLogits[t] = -1e9
		if l, ok := typeLogits[a.TypeAt(t)]; ok && f.TypeMask[t] == 1 {
			o.TypeLogits[t] = l
		}
		for e := range E {
			o.ElemLogits[t*E+e] = (f.ElemTypeMask[t*E+e] - 1) * 1e9
		}
	}
	for r := range a.TextRows() {
		for k := range K {
			o.CandLogits[r*K+k] = (f.CandMask[r*K+k] - 1) * 1e9
		}
	}
	return o
}

func TestSampleBuildsActionsAndRecomputesLogProb(t *testing.T) {
	a := DefaultArchitecture()
	f, err := a.Featurize(typeTextObs())
	if err != nil {
		t.Fatal(err)
	}
	o := handOutput(&a, f, map[eventspb.ActionType]float32{
		eventspb.ActionType_ACTION_TYPE_FILL: 2, eventspb.ActionType_ACTION_TYPE_CLICK: 1, eventspb.ActionType_ACTION_TYPE_NOOP: 0,
	})
	// Make "blue fox" the text box's favourite candidate.
	K := a.MaxCandidates
	o.CandLogits[0*K+f.Keys] = 3
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[string]int{}
	const n = 4000
	for range n {
		d, err := a.Sample(f, o, rng, false)
		if err != nil {
			t.Fatal(err)
		}
		counts[d.Action.GetRaw()]++
		// The recorded action maps back to the same choice and log-prob.
		c, err := a.ChoiceOf(f, d.Action)
		if err != nil {
			t.Fatal(err)
		}
		if c != d.Choice {
			t.Fatalf("ChoiceOf(%s) = %+v, want %+v", d.Action.GetRaw(), c, d.Choice)
		}
		lp, err := a.LogProb(o, c)
		if err != nil {
			t.Fatal(err)
		}
		if lp != d.LogProb || d.Action.GetLogProb() != lp || d.Action.GetValue() != 0.25 {
			t.Fatalf("log-prob %v, decision %v, action %v", lp, d.LogProb, d.Action.GetLogProb())
		}
	}
	// FILL only ever targets the text box (a1); p(FILL)·p("blue fox"|a1).
	pType := softmax([]float64{2, 1, 0})
	nCand := float64(len(f.Candidates) - f.Keys)
	pBlue := math.Exp(3) / (math.Exp(3) + nCand - 1)
	want := map[string]float64{
		`fill("a1", "blue fox")`: pType[0] * pBlue,
		`click("a1")`:            pType[1] / 2,
		`click("a2")`:            pType[1] / 2,
		`noop()`:                 pType[2],
	}
	total := 0
	for raw, p := range want {
		got := float64(counts[raw]) / n
		total += counts[raw]
		// 5 standard deviations of a binomial proportion: a wrong
		// distribution fails, a right one practically never does.
		if sd := math.Sqrt(p * (1 - p) / n); math.Abs(got-p) > 5*sd+1e-3 {
			t.Errorf("%s: frequency %.3f, want %.3f", raw, got, p)
		}
	}
	for raw, c := range counts {
		if _, ok := want[raw]; !ok && raw[:4] != "fill" {
			t.Errorf("unexpected action %s (%d times)", raw, c)
		}
	}

	// Greedy takes the argmax of each head.
	d, err := a.Sample(f, o, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if d.Action.GetRaw() != `fill("a1", "blue fox")` || int(d.Action.GetTextToken()) != f.Keys {
		t.Fatalf("greedy action %s (token %d)", d.Action.GetRaw(), d.Action.GetTextToken())
	}
	wantLP := math.Log(pType[0]) + 0 + math.Log(pBlue) // one eligible element: log 1
	if math.Abs(d.LogProb-wantLP) > 1e-9 {
		t.Fatalf("greedy log-prob %v, want %v", d.LogProb, wantLP)
	}
}

func TestChoiceOfRejectsUnrepresentableActions(t *testing.T) {
	a := DefaultArchitecture()
	f, err := a.Featurize(typeTextObs())
	if err != nil {
		t.Fatal(err)
	}
	for _, act := range []*eventspb.Action{
		{Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: "zz"},
		{Type: eventspb.ActionType_ACTION_TYPE_FILL, Bid: "a1", Text: "not in the instruction"},
		{Type: eventspb.ActionType_ACTION_TYPE_GOTO, Url: "http://127.0.0.1/"},
	} {
		if _, err := a.ChoiceOf(f, act); !errors.Is(err, ErrNotRepresentable) {
			t.Errorf("%v: err = %v, want ErrNotRepresentable", act, err)
		}
	}
	// A demonstration's fill without text_token still maps (by text, any case).
	c, err := a.ChoiceOf(f, &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_FILL, Bid: "a1", Text: "Blue Fox"})
	if err != nil || c.Candidate != f.Keys || c.Element != 0 {
		t.Fatalf("ChoiceOf demo fill = %+v, %v", c, err)
	}
	// A press's key is a candidate of the key row, whatever element it
	// went to; a key the policy has not is not its action; a press
	// without a key is Enter's.
	for key, want := range map[string]string{"ArrowRight": "ArrowRight", "Control+a": "Control+a", "": "Enter"} {
		c, err := a.ChoiceOf(f, &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_PRESS, Bid: "a1", Key: key})
		if err != nil || c.Candidate < 0 || c.Candidate >= f.Keys || f.Candidates[c.Candidate] != want {
			t.Fatalf("press %q: %+v, %v; want the key %q", key, c, err, want)
		}
		back, err := a.ActionOf(f, c)
		if err != nil || back.GetKey() != want || back.GetText() != "" || back.GetBid() != "a1" {
			t.Fatalf("press %q back: %v, %v", key, back, err)
		}
	}
	var nr *NotRepresentableError
	if _, err := a.ChoiceOf(f, &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_PRESS, Bid: "a1", Key: "Alt+F4"}); !errors.As(err, &nr) || nr.Kind != KeyNotPressable {
		t.Fatalf("press Alt+F4: err = %v, want %q", err, KeyNotPressable)
	}
	// A fill never types a key's name, nor a press a text.
	if _, err := a.ActionOf(f, Choice{Type: a.TypeIndex(eventspb.ActionType_ACTION_TYPE_FILL), Element: 0, Candidate: 0, Point: -1, ToPoint: -1}); !errors.Is(err, ErrNotRepresentable) {
		t.Fatalf("fill with a key: err = %v", err)
	}
	if _, err := a.ActionOf(f, Choice{Type: a.TypeIndex(eventspb.ActionType_ACTION_TYPE_PRESS), Element: 0, Candidate: f.Keys, Point: -1, ToPoint: -1}); !errors.Is(err, ErrNotRepresentable) {
		t.Fatalf("press with a text: err = %v", err)
	}
	// The scroll head turns the wheel down: up is not its action.
	if _, err := a.ChoiceOf(f, &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_SCROLL, Bid: "a1", DeltaY: 105}); err != nil {
		t.Fatalf("scroll down: %v", err)
	}
	if _, err := a.ChoiceOf(f, &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_SCROLL, Bid: "a1", DeltaY: -105}); !errors.As(err, &nr) || nr.Kind != ScrollNotDown {
		t.Fatalf("scroll up: err = %v, want %q", err, ScrollNotDown)
	}
	// A masked choice has no log-prob.
	o := handOutput(&a, f, map[eventspb.ActionType]float32{eventspb.ActionType_ACTION_TYPE_NOOP: 0})
	if _, err := a.LogProb(o, Choice{Type: a.TypeIndex(eventspb.ActionType_ACTION_TYPE_CLICK), Element: 0, Candidate: -1}); !errors.Is(err, ErrNotRepresentable) {
		t.Fatalf("masked type: err = %v", err)
	}
}

func TestEntropyOfUniformChoices(t *testing.T) {
	a := DefaultArchitecture()
	f, err := a.Featurize(clickButtonObs(t))
	if err != nil {
		t.Fatal(err)
	}
	// Only CLICK allowed, three equal buttons: H = log 3.
	o := handOutput(&a, f, map[eventspb.ActionType]float32{eventspb.ActionType_ACTION_TYPE_CLICK: 0})
	h, err := a.Entropy(o)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(h-math.Log(3)) > 1e-9 {
		t.Fatalf("entropy %v, want log 3 = %v", h, math.Log(3))
	}
	// NOOP and CLICK equally likely: H = log 2 + ½·log 3.
	o = handOutput(&a, f, map[eventspb.ActionType]float32{eventspb.ActionType_ACTION_TYPE_CLICK: 0, eventspb.ActionType_ACTION_TYPE_NOOP: 0})
	if h, _ = a.Entropy(o); math.Abs(h-(math.Log(2)+math.Log(3)/2)) > 1e-9 {
		t.Fatalf("entropy %v, want %v", h, math.Log(2)+math.Log(3)/2)
	}
}

func softmax(xs []float64) []float64 {
	var s float64
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Exp(x)
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
	return out
}

// TestGreedyAvoidingSkipsTheRepeat: with the argmax action to avoid, greedy
// decoding takes the most likely different action; without, the argmax.
func TestGreedyAvoidingSkipsTheRepeat(t *testing.T) {
	a := DefaultArchitecture()
	f, err := a.Featurize(clickButtonObs(t))
	if err != nil {
		t.Fatal(err)
	}
	A, E, K, G := a.NumTypes(), a.MaxElements, a.MaxCandidates, a.Cells()
	out := &Output{TypeLogits: make([]float32, A), ElemLogits: make([]float32, A*E), CandLogits: make([]float32, a.TextRows()*K),
		PointLogits: make([]float32, (A+1)*G), PointOffsets: make([]float32, G*a.Offsets())}
	click := a.TypeIndex(eventspb.ActionType_ACTION_TYPE_CLICK)
	for i := range out.TypeLogits {
		out.TypeLogits[i] = -5
	}
	out.TypeLogits[click] = 5
	for i := range out.ElemLogits {
		out.ElemLogits[i] = -1e9 // masked
	}
	row := out.ElemLogits[click*E : (click+1)*E]
	row[0], row[1], row[2] = 1, 3, 2 // "Yes" (element 1) first, then element 2
	first, err := a.GreedyAvoiding(f, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Action.GetBid() != f.BIDs[1] {
		t.Fatalf("greedy chose %s, want %s", first.Action.GetBid(), f.BIDs[1])
	}
	next, err := a.GreedyAvoiding(f, out, []*eventspb.Action{first.Action})
	if err != nil {
		t.Fatal(err)
	}
	if next.Action.GetType() != eventspb.ActionType_ACTION_TYPE_CLICK || next.Action.GetBid() != f.BIDs[2] {
		t.Fatalf("avoiding %s chose %s %s, want a click on %s", first.Action.GetRaw(), next.Action.GetType(), next.Action.GetBid(), f.BIDs[2])
	}
	if lp, _ := a.LogProb(out, next.Choice); lp != next.LogProb {
		t.Errorf("log-prob %v, want the choice's %v", next.LogProb, lp)
	}
	// Both clicks avoided (they were taken from this page state): the
	// third element, still a click.
	third, err := a.GreedyAvoiding(f, out, []*eventspb.Action{first.Action, nil, next.Action})
	if err != nil {
		t.Fatal(err)
	}
	if third.Action.GetType() != eventspb.ActionType_ACTION_TYPE_CLICK || third.Action.GetBid() != f.BIDs[0] {
		t.Fatalf("avoiding two clicks chose %s %s, want a click on %s", third.Action.GetType(), third.Action.GetBid(), f.BIDs[0])
	}
}

// TestPointHead: a drag sampled from the point head's two rows lands on
// the chosen sub-cells' centres in wire-frame pixels, maps back to the same
// choice and log-prob, and a recorded point maps to the position that holds
// it; a point outside the frame is not representable; the entropy of
// uniform cells and sub-cells, weighed by PointEntropyScale, is log E.
func TestPointHead(t *testing.T) {
	a := DefaultArchitecture()
	f, err := a.Featurize(clickButtonObs(t))
	if err != nil {
		t.Fatal(err)
	}
	drag := a.TypeIndex(eventspb.ActionType_ACTION_TYPE_MOUSE_DRAG_AND_DROP)
	o := handOutput(&a, f, map[eventspb.ActionType]float32{eventspb.ActionType_ACTION_TYPE_MOUSE_DRAG_AND_DROP: 0})
	G, S, S2, A := a.Cells(), a.PointSubdivisions, a.Offsets(), a.NumTypes()
	o.PointLogits[drag*G+17] = 20      // press: cell 17 (row 1, column 1) ...
	o.PointOffsets[17*S2+S+2] = 20     // ... its sub-cell (2, 1)
	o.PointLogits[A*G+G-1] = 20        // release: the last cell ...
	o.PointOffsets[(G-1)*S2+S2-1] = 20 // ... its last sub-cell
	d, err := a.Sample(f, o, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if d.Point != 17*S2+S+2 || d.ToPoint != G*S2-1 {
		t.Fatalf("greedy drag chose positions %d -> %d, want %d -> %d", d.Point, d.ToPoint, 17*S2+S+2, G*S2-1)
	}
	oh, ow := a.ConvOut()
	sw, sh := f.FrameWidth/float32(ow*S), f.FrameHeight/float32(oh*S)
	act := d.Action
	if act.GetX() != float32(S+2)*sw+sw/2 || act.GetY() != float32(S+1)*sh+sh/2 || act.GetToX() != f.FrameWidth-sw/2 || act.GetToY() != f.FrameHeight-sh/2 {
		t.Fatalf("drag (%g,%g) -> (%g,%g), want the sub-cells' centres", act.GetX(), act.GetY(), act.GetToX(), act.GetToY())
	}
	if act.GetRaw() == "" || act.GetType() != eventspb.ActionType_ACTION_TYPE_MOUSE_DRAG_AND_DROP {
		t.Fatalf("action %v", act)
	}
	c, err := a.ChoiceOf(f, act)
	if err != nil || c != d.Choice {
		t.Fatalf("ChoiceOf = %+v, %v; want %+v", c, err, d.Choice)
	}
	lp, err := a.LogProb(o, c)
	if err != nil || math.Abs(lp-d.LogProb) > 1e-12 {
		t.Fatalf("log-prob %g (%v), sampled with %g", lp, err, d.LogProb)
	}
	// A recorded point anywhere in a sub-cell is that position: pixel
	// column 2S+1, row 3S-1 is cell (2, 2), sub-cell (1, S-1).
	rec := &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_MOUSE_CLICK, X: float32(2*S+1)*sw + 0.1, Y: float32(3*S)*sh - 0.1}
	if c, err := a.ChoiceOf(f, rec); err != nil || c.Point != (2*ow+2)*S2+(S-1)*S+1 || c.ToPoint != -1 {
		t.Fatalf("ChoiceOf(%v) = %+v, %v; want position %d", rec, c, err, (2*ow+2)*S2+(S-1)*S+1)
	}
	rec.X = f.FrameWidth + 1
	var nr *NotRepresentableError
	if _, err := a.ChoiceOf(f, rec); !errors.As(err, &nr) || nr.Kind != PointOutside {
		t.Fatalf("a point outside the frame: %v", err)
	}
	// Only MOUSE_CLICK, uniform cells and sub-cells: H = w·log(G·S²) =
	// log E, a point at its most uncertain weighing an element's choice.
	u := handOutput(&a, f, map[eventspb.ActionType]float32{eventspb.ActionType_ACTION_TYPE_MOUSE_CLICK: 0})
	h, err := a.Entropy(u)
	if err != nil || math.Abs(h-math.Log(float64(a.MaxElements))) > 1e-9 {
		t.Fatalf("entropy %g (%v), want log %d", h, err, a.MaxElements)
	}
}

// TestListboxSelectAddsOne: on a listbox with options selected, a select
// keeps them and adds the chosen one; a recorded selection of the kept
// ones plus one maps back, others are not the policy's.
func TestListboxSelectAddsOne(t *testing.T) {
	a := DefaultArchitecture()
	obs := &eventspb.Observation{
		Instruction: "Select Peru, Chad from the scroll list and click Submit.",
		Width:       160, Height: 210,
		Elements: []*eventspb.Element{
			{Bid: "l", Role: "listbox", Text: "Peru", Box: box(10, 60, 100, 60), Value: "Peru",
				Options: []string{"Chad", "Fiji", "Peru"}, Selected: []string{"Peru"}},
			{Bid: "s", Role: "button", Text: "Submit", Box: box(10, 130, 40, 20)},
		},
	}
	f, err := a.Featurize(obs)
	if err != nil {
		t.Fatal(err)
	}
	rec := &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_SELECT_OPTION, Bid: "l", Text: "Peru", Options: []string{"Peru", "Chad"}}
	c, err := a.ChoiceOf(f, rec)
	if err != nil || f.Candidates[c.Candidate] != "Chad" {
		t.Fatalf("ChoiceOf(%v) = %+v, %v; want the candidate Chad", rec, c, err)
	}
	back, err := a.ActionOf(f, c)
	if err != nil || !slices.Equal(back.GetOptions(), []string{"Peru", "Chad"}) || back.GetText() != "Peru" {
		t.Fatalf("ActionOf = %v, %v; want Peru kept and Chad added", back, err)
	}
	// The policy's choice of an option already selected keeps the
	// selection, and maps back by its text_token.
	obs.Elements[0].Selected = []string{"Peru", "Chad"}
	if f, err = a.Featurize(obs); err != nil {
		t.Fatal(err)
	}
	again := Choice{Type: c.Type, Element: c.Element, Candidate: slices.Index(f.Candidates, "Chad"), Point: -1, ToPoint: -1}
	kept, err := a.ActionOf(f, again)
	if err != nil || !slices.Equal(kept.GetOptions(), []string{"Peru", "Chad"}) {
		t.Fatalf("ActionOf(Chad again) = %v, %v; want the selection kept", kept, err)
	}
	if back, err := a.ChoiceOf(f, kept); err != nil || back != again {
		t.Fatalf("ChoiceOf(%v) = %+v, %v; want %+v", kept, back, err, again)
	}
	obs.Elements[0].Selected = []string{"Peru"}
	if f, err = a.Featurize(obs); err != nil {
		t.Fatal(err)
	}
	rec.TextToken = nil
	var nr *NotRepresentableError
	for _, opts := range [][]string{{"Chad", "Fiji"}, {"Peru", "Chad", "Fiji"}} {
		rec.Options = opts
		if _, err := a.ChoiceOf(f, rec); !errors.As(err, &nr) || nr.Kind != NotOneMore {
			t.Errorf("options %q: err = %v, want %q", opts, err, NotOneMore)
		}
	}
}
