package policy

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/instruction"
)

func elemFeat(t *testing.T, f *Features, e int, name string) float32 {
	t.Helper()
	c := slices.Index(elementFeatureNames, name)
	if c < 0 {
		t.Fatalf("no element feature %q", name)
	}
	return f.ElemFeats[e*len(elementFeatureNames)+c]
}

func candFeat(t *testing.T, f *Features, k int, name string) float32 {
	t.Helper()
	c := slices.Index(candidateFeatureNames, name)
	if c < 0 {
		t.Fatalf("no candidate feature %q", name)
	}
	return f.CandFeats[k*len(candidateFeatureNames)+c]
}

func TestFeaturizeMatchesInstructionToElements(t *testing.T) {
	a := DefaultArchitecture()
	f, err := a.Featurize(clickButtonObs(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.checkFeatures(f); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.BIDs, []string{"11", "12", "13"}) {
		t.Fatalf("BIDs = %v", f.BIDs)
	}
	// Only the "Yes" button is the quoted target.
	for e, want := range []float32{0, 1, 0} {
		if got := elemFeat(t, f, e, "exact_quote"); got != want {
			t.Errorf("element %d exact_quote = %v, want %v", e, got, want)
		}
	}
	if got := elemFeat(t, f, 2, "text_in_instr"); got != 0 {
		t.Errorf(`"Maybe later" text_in_instr = %v, want 0`, got)
	}
	if got := elemFeat(t, f, 1, "role_button"); got != 1 {
		t.Errorf("role_button = %v, want 1", got)
	}
	// Box normalised by the frame size.
	if got := elemFeat(t, f, 1, "x"); math.Abs(float64(got)-60.0/160) > 1e-6 {
		t.Errorf("x = %v, want %v", got, 60.0/160)
	}
	// The Yes button sits on the red patch; the others on white.
	if r, g := elemFeat(t, f, 1, "mean_r"), elemFeat(t, f, 1, "mean_g"); r < 0.49 || g > -0.49 {
		t.Errorf("Yes button colour r=%v g=%v, want red (0.5, -0.5)", r, g)
	}
	if g := elemFeat(t, f, 0, "mean_g"); g < 0.49 {
		t.Errorf("No button colour g=%v, want white (0.5)", g)
	}
	// Frame: a red patch shows in the red channel only.
	H, W := a.FrameHeight, a.FrameWidth
	var minG float32 = 1
	for i := range H * W {
		minG = min(minG, f.Frame[H*W+i])
		if f.Frame[i] < 0.49 {
			t.Fatalf("red channel pixel %d = %v, want 0.5 everywhere", i, f.Frame[i])
		}
	}
	if minG > -0.4 {
		t.Errorf("green channel min %v: the red patch is missing from the frame", minG)
	}
	// Three elements: mean-pooling weights 1/3 on them, none elsewhere.
	for e, w := range f.ElemWeights {
		want := float32(0)
		if e < 3 {
			want = 1.0 / 3
		}
		if w != want {
			t.Errorf("ElemWeights[%d] = %v, want %v", e, w, want)
		}
	}
	// FILL and SELECT_OPTION have no eligible element: masked.
	for _, typ := range []eventspb.ActionType{eventspb.ActionType_ACTION_TYPE_FILL, eventspb.ActionType_ACTION_TYPE_SELECT_OPTION} {
		if f.TypeMask[a.TypeIndex(typ)] != 0 {
			t.Errorf("%s allowed on a page without a matching element", typ)
		}
	}
	if f.TypeMask[a.TypeIndex(eventspb.ActionType_ACTION_TYPE_CLICK)] != 1 {
		t.Error("CLICK masked on a page with buttons")
	}
}

func TestFeaturizeCandidatesPutQuotedTextFirst(t *testing.T) {
	a := DefaultArchitecture()
	f, err := a.Featurize(typeTextObs())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"blue fox", "Type", "blue", "fox", "into", "the", "text", "box", "and", "press", "Submit"}
	if !slices.Equal(f.Candidates[:f.Keys], PressKeys) || !slices.Equal(f.Candidates[f.Keys:], want) {
		t.Fatalf("candidates = %q, want the keys then %q", f.Candidates, want)
	}
	k0 := f.Keys
	if candFeat(t, f, k0, "quoted") != 1 || candFeat(t, f, k0, "after_type_verb") != 1 {
		t.Errorf(`"blue fox" should be quoted and follow a typing verb`)
	}
	if candFeat(t, f, k0+10, "equals_elem_text") != 1 {
		t.Errorf(`"Submit" should match the button's text`)
	}
	// The texts go with every element row and the element-free row, the
	// keys with the key row alone.
	for k := range a.MaxCandidates {
		for r := range a.TextRows() {
			text, key := k >= k0 && k < k0+len(want), k < k0
			if got, want := f.CandMask[r*a.MaxCandidates+k], bool01(r == a.KeyRow() && key || r != a.KeyRow() && text); got != want {
				t.Errorf("CandMask[%d,%d] = %v, want %v", r, k, got, want)
			}
		}
	}
	// FILL may only target the text box; CLICK either element.
	E := a.MaxElements
	fill, click := a.TypeIndex(eventspb.ActionType_ACTION_TYPE_FILL), a.TypeIndex(eventspb.ActionType_ACTION_TYPE_CLICK)
	if f.ElemTypeMask[fill*E] != 1 || f.ElemTypeMask[fill*E+1] != 0 {
		t.Errorf("FILL element mask = %v, want only the text box", f.ElemTypeMask[fill*E:fill*E+2])
	}
	if f.ElemTypeMask[click*E] != 1 || f.ElemTypeMask[click*E+1] != 1 {
		t.Errorf("CLICK element mask = %v, want both", f.ElemTypeMask[click*E:click*E+2])
	}
	if f.TypeMask[fill] != 1 {
		t.Error("FILL masked on a page with a text box")
	}
	// No frame: zeros, and boxes still normalised by width/height.
	for _, v := range f.Frame {
		if v != 0 {
			t.Fatal("frame should be zeros without a frame")
		}
	}
}

func TestFeaturizeIsDeterministic(t *testing.T) {
	a := DefaultArchitecture()
	obs := clickButtonObs(t)
	f1, err := a.Featurize(obs)
	if err != nil {
		t.Fatal(err)
	}
	f2, err := a.Featurize(proto.Clone(obs).(*eventspb.Observation))
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range f1.fields() {
		if fmt.Sprint(x) != fmt.Sprint(f2.fields()[i]) {
			t.Fatalf("input %s differs between two featurizations", a.InputSpecs()[i].Name)
		}
	}
	// Token buckets are in [1, vocab) on used slots and 0 (padding) elsewhere.
	n := len(instruction.LowerWords(obs.GetInstruction()))
	for i, id := range f1.InstrTokens {
		if (i < n) != (id >= 1 && id < int64(a.Vocab)) {
			t.Errorf("InstrTokens[%d] = %d with %d words", i, id, n)
		}
	}
}

func TestFeaturizeKeepsElementsInFrameFirst(t *testing.T) {
	a := smallArch() // 8 elements
	obs := &eventspb.Observation{Instruction: "click", Width: 100, Height: 100}
	for i := range 12 {
		y := float32(10 * i)
		if i%2 == 0 {
			y = 500 // below the fold
		}
		obs.Elements = append(obs.Elements, &eventspb.Element{Bid: fmt.Sprint(i), Role: "link", Text: "x", Box: box(0, y, 10, 10)})
	}
	f, err := a.Featurize(obs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1", "3", "5", "7", "9", "0", "2", "4"} // 11 sits at y=110, below the fold too
	if !slices.Equal(f.BIDs, want) {
		t.Fatalf("BIDs = %v, want %v", f.BIDs, want)
	}
}

func TestFeaturizeRejectsUndecodableFrame(t *testing.T) {
	a := DefaultArchitecture()
	obs := clickButtonObs(t)
	obs.Frame = obs.Frame[:40]
	if _, err := a.Featurize(obs); err == nil {
		t.Fatal("want an error for a truncated PNG")
	}
	obs.FrameFormat = "gif"
	if _, err := a.Featurize(obs); err == nil {
		t.Fatal("want an error for an unknown format")
	}
	if _, err := a.Featurize(nil); err == nil {
		t.Fatal("want an error for a nil observation")
	}
}

func TestFeaturizeDecodesJPEG(t *testing.T) {
	a := DefaultArchitecture()
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for i := range img.Pix {
		img.Pix[i] = 255
		if i%4 == 2 { // no blue: yellow
			img.Pix[i] = 0
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	f, err := a.Featurize(&eventspb.Observation{Frame: b.Bytes(), Instruction: "x"}) // no format: sniffed
	if err != nil {
		t.Fatal(err)
	}
	HW := a.FrameHeight * a.FrameWidth
	if r, bl := f.Frame[0], f.Frame[2*HW]; r < 0.45 || bl > -0.45 {
		t.Fatalf("yellow frame decoded as r=%v b=%v", r, bl)
	}
	if f.FrameWidth != 64 || f.FrameHeight != 48 {
		t.Fatalf("frame size %vx%v, want the decoded 64x48", f.FrameWidth, f.FrameHeight)
	}
}

func FuzzFeaturize(f *testing.F) {
	a := smallArch()
	// A small seed: the fuzzer minimises new inputs, which is slow on
	// frames of kilobytes; frame decoding has its own tests.
	seed, err := proto.Marshal(typeTextObs())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var obs eventspb.Observation
		if proto.Unmarshal(b, &obs) != nil {
			return
		}
		feats, err := a.Featurize(&obs)
		if err != nil {
			return
		}
		if err := a.checkFeatures(feats); err != nil {
			t.Fatal(err)
		}
		for _, v := range feats.ElemFeats {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("non-finite element feature from %v", &obs)
			}
		}
	})
}

func TestFeaturizeSurvivesHostileBoxes(t *testing.T) {
	a := DefaultArchitecture()
	obs := clickButtonObs(t)
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	obs.Elements = append(obs.Elements,
		&eventspb.Element{Bid: "n", Box: box(nan, nan, nan, nan)},
		&eventspb.Element{Bid: "i", Box: box(-inf, 0, inf, 1e30)},
		&eventspb.Element{Bid: "z"}, // no box at all
	)
	f, err := a.Featurize(obs)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range f.ElemFeats {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatal("non-finite element feature")
		}
	}
}

// TestFeatureColumnsMatchTheirNames keeps the column constants and the
// names published in the architecture JSON in step.
func TestFeatureColumnsMatchTheirNames(t *testing.T) {
	if len(elementFeatureNames) != numElemFeatures || len(candidateFeatureNames) != numCandFeatures {
		t.Fatalf("%d element names for %d columns, %d candidate names for %d columns",
			len(elementFeatureNames), numElemFeatures, len(candidateFeatureNames), numCandFeatures)
	}
	for col, name := range map[int]string{
		efX: "x", efInFrame: "in_frame", efRole + roleButton: "role_button", efRole + roleOther: "role_other",
		efTextEmpty: "text_empty", efExactQuote: "exact_quote", efQuoteInText: "quote_in_text", efChecked: "checked",
		efDisabled: "disabled", efMeanR: "mean_r", efOrder: "order",
	} {
		if elementFeatureNames[col] != name {
			t.Errorf("element column %d is named %q, want %q", col, elementFeatureNames[col], name)
		}
	}
	for col, name := range map[int]string{cfQuoted: "quoted", cfAfterTypeVerb: "after_type_verb", cfHasDigit: "has_digit"} {
		if candidateFeatureNames[col] != name {
			t.Errorf("candidate column %d is named %q, want %q", col, candidateFeatureNames[col], name)
		}
	}
}

// TestFeaturizeNamesColoursAndFill: the element whose foreground is the
// colour the instruction names is marked, whatever its shape's coverage,
// and fill tells a shape that covers a quarter of its box from a filled one.
func TestFeaturizeNamesColoursAndFill(t *testing.T) {
	red, blue := color.RGBA{214, 40, 40, 255}, color.RGBA{31, 95, 214, 255}
	frame := pngFrame(t, 100, 60, map[image.Rectangle]color.RGBA{
		image.Rect(15, 15, 25, 25): red,  // a red shape in the middle of a 20x20 box
		image.Rect(50, 10, 70, 30): blue, // a blue square filling its box
	})
	obs := &eventspb.Observation{
		Instruction: "Click the red circle.", Frame: frame, FrameFormat: "png", Width: 100, Height: 60,
		Elements: []*eventspb.Element{
			{Bid: "a", Role: "button", Box: box(10, 10, 20, 20)},
			{Bid: "b", Role: "button", Box: box(50, 10, 20, 20)},
		},
	}
	a := DefaultArchitecture()
	f, err := a.Featurize(obs)
	if err != nil {
		t.Fatal(err)
	}
	if elemFeat(t, f, 0, "colour_named") != 1 || elemFeat(t, f, 1, "colour_named") != 0 {
		t.Errorf("colour_named = %v, %v; want 1, 0", elemFeat(t, f, 0, "colour_named"), elemFeat(t, f, 1, "colour_named"))
	}
	if fill := elemFeat(t, f, 0, "fill"); math.Abs(float64(fill)-0.25) > 0.05 {
		t.Errorf("fill of a quarter-covering shape = %v, want 0.25", fill)
	}
	if fill := elemFeat(t, f, 1, "fill"); fill != 1 {
		t.Errorf("fill of a filled box = %v, want 1", fill)
	}
	if elemFeat(t, f, 0, "last_target") != 0 || elemFeat(t, f, 1, "last_target") != 0 {
		t.Error("last_target set without a previous action")
	}
	obs.Instruction, obs.PreviousBid = "Pick the colour blue.", "b"
	if f, err = a.Featurize(obs); err != nil {
		t.Fatal(err)
	}
	if elemFeat(t, f, 0, "colour_named") != 0 || elemFeat(t, f, 1, "colour_named") != 1 {
		t.Errorf("after naming blue: colour_named = %v, %v; want 0, 1", elemFeat(t, f, 0, "colour_named"), elemFeat(t, f, 1, "colour_named"))
	}
	if elemFeat(t, f, 0, "last_target") != 0 || elemFeat(t, f, 1, "last_target") != 1 {
		t.Error("last_target does not mark the previous action's element")
	}
}

// TestFeaturizeValuesCarryTheirFieldWord checks that a quoted value's tokens
// hold the word introducing it (what matches it to its field's label), and
// that an unquoted date or time is one candidate, ranked with the quotes.
func TestFeaturizeValuesCarryTheirFieldWord(t *testing.T) {
	a := DefaultArchitecture()
	obs := &eventspb.Observation{
		Instruction: `Enter the username "kanesha" and the password "UWH" into the text fields and press login.`,
		Width:       160, Height: 210,
		Elements: []*eventspb.Element{
			{Bid: "u", Role: "textbox", Text: "Username", Box: box(10, 60, 100, 20)},
			{Bid: "p", Role: "textbox", Text: "Password", Box: box(10, 90, 100, 20)},
			{Bid: "l", Role: "button", Text: "Login", Box: box(10, 120, 40, 20)},
		},
	}
	f, err := a.Featurize(obs)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Candidates[f.Keys:f.Keys+2], []string{"kanesha", "UWH"}) {
		t.Fatalf("first texts = %q, want the two quoted values", f.Candidates[f.Keys:f.Keys+2])
	}
	Lc := a.CandTokens
	for i, want := range []string{"username", "password"} {
		k := f.Keys + i
		toks := f.CandTokens[k*Lc : (k+1)*Lc]
		if toks[1] != hashWord(want, a.Vocab) || f.CandTokWeights[k*Lc+1] != 0.5 {
			t.Errorf("candidate %q tokens %v (weights %v): want its value then %q", f.Candidates[k], toks, f.CandTokWeights[k*Lc:(k+1)*Lc], want)
		}
	}

	for instr, want := range map[string]string{
		"Enter 09/12/2016 as the date and hit submit.": "09/12/2016",
		"Enter 5:38 PM as the time and press submit.":  "5:38 PM",
		`Enter "x" then 11:02 AM as the time.`:         "11:02 AM",
		"Click the 3rd button.":                        "",
	} {
		obs.Instruction = instr
		if f, err = a.Featurize(obs); err != nil {
			t.Fatal(err)
		}
		k := slices.Index(f.Candidates, want)
		switch {
		case want == "" && candFeat(t, f, f.Keys, "quoted") == 1:
			t.Errorf("%q: %q taken for a value", instr, f.Candidates[f.Keys])
		case want != "" && (k < 0 || candFeat(t, f, k, "quoted") != 1):
			t.Errorf("%q: candidates %q; want %q whole among the values", instr, f.Candidates, want)
		}
	}
}

// TestFeaturizeNamesCSSColours checks colour_named for a CSS colour that no
// basic colour term is near, beside the basic one it would be taken for
// (MiniWoB++'s click-color shows blue beside cyan).
func TestFeaturizeNamesCSSColours(t *testing.T) {
	lime, blue, cyan := color.RGBA{0, 255, 0, 255}, color.RGBA{0, 0, 255, 255}, color.RGBA{0, 255, 255, 255}
	frame := pngFrame(t, 120, 40, map[image.Rectangle]color.RGBA{
		image.Rect(0, 0, 40, 40): lime, image.Rect(40, 0, 80, 40): blue, image.Rect(80, 0, 120, 40): cyan,
	})
	obs := &eventspb.Observation{
		Frame: frame, FrameFormat: "png", Width: 120, Height: 40,
		Elements: []*eventspb.Element{
			{Bid: "a", Role: "clickable", Box: box(0, 0, 40, 40)},
			{Bid: "b", Role: "clickable", Box: box(40, 0, 40, 40)},
			{Bid: "c", Role: "clickable", Box: box(80, 0, 40, 40)},
		},
	}
	a := DefaultArchitecture()
	for instr, want := range map[string][3]float32{
		"Click on the lime colored box.":  {1, 0, 0},
		"Click on the green colored box.": {0, 0, 0},
		"Click on the blue colored box.":  {0, 1, 0},
		"Click on the cyan colored box.":  {0, 0, 1},
	} {
		obs.Instruction = instr
		f, err := a.Featurize(obs)
		if err != nil {
			t.Fatal(err)
		}
		got := [3]float32{elemFeat(t, f, 0, "colour_named"), elemFeat(t, f, 1, "colour_named"), elemFeat(t, f, 2, "colour_named")}
		if got != want {
			t.Errorf("%q: colour_named = %v, want %v", instr, got, want)
		}
	}
}

// TestFeaturizeNamesIconsByHintAndContext checks hint_named and
// context_match on MiniWoB++'s social-media: four icon buttons per tweet,
// named only by class, and the tweet's text naming its user. Only the
// asked button of the asked user's tweet has both.
func TestFeaturizeNamesIconsByHintAndContext(t *testing.T) {
	obs := &eventspb.Observation{Instruction: `For the user @volutpat, click on the "Like" button.`, Width: 160, Height: 210}
	for i, user := range []string{"@lorem", "@volutpat", "@ipsum"} {
		ctx := "Name " + user + " 2h Nulla like amet"
		if i == 1 {
			ctx = "Other " + user + " 5h Amet sed"
		}
		for j, class := range []string{"reply", "retweet", "like", "more"} {
			obs.Elements = append(obs.Elements, &eventspb.Element{Bid: fmt.Sprintf("%d%d", i, j), Role: "clickable",
				Box: box(float32(20+30*j), float32(20+60*i), 14, 14), Hint: "span " + class, Context: ctx})
		}
	}
	a := DefaultArchitecture()
	f, err := a.Featurize(obs)
	if err != nil {
		t.Fatal(err)
	}
	best, bestScore := -1, float32(-1)
	for e, bid := range f.BIDs {
		hint := elemFeat(t, f, e, "hint_named")
		if want := float32(bool01(bid[1] == '2')); hint != want {
			t.Errorf("element %s hint_named = %v, want %v", bid, hint, want)
		}
		if s := hint + elemFeat(t, f, e, "context_match"); s > bestScore {
			best, bestScore = e, s
		}
	}
	if f.BIDs[best] != "12" {
		t.Errorf("hint_named + context_match is highest at %s, want 12 (the like button of @volutpat's tweet)", f.BIDs[best])
	}
}

// TestFeaturizeOrdinalPicksTheNthOfItsKind checks that "the 2nd textbox"
// marks the second textbox in document order, not the second element.
func TestFeaturizeOrdinalPicksTheNthOfItsKind(t *testing.T) {
	obs := &eventspb.Observation{Instruction: "Focus into the 2nd input textbox.", Width: 100, Height: 100,
		Elements: []*eventspb.Element{
			{Bid: "t1", Role: "textbox", Box: box(0, 0, 50, 10), Hint: "input text"},
			{Bid: "b1", Role: "button", Box: box(0, 20, 50, 10), Hint: "button"},
			{Bid: "t2", Role: "textbox", Box: box(0, 40, 50, 10), Hint: "input text"},
			{Bid: "t3", Role: "textarea", Box: box(0, 60, 50, 10), Hint: "textarea"},
		}}
	a := DefaultArchitecture()
	f, err := a.Featurize(obs)
	if err != nil {
		t.Fatal(err)
	}
	for e, want := range []float32{0, 0, 1, 0} {
		if got := elemFeat(t, f, e, "ordinal"); got != want {
			t.Errorf("element %s ordinal = %v, want %v", f.BIDs[e], got, want)
		}
	}
	// "input" names the inputs by their tag (0.5: an instruction word, not a
	// quoted value); the textarea and the button are not named.
	for e, want := range []float32{0.5, 0, 0.5, 0} {
		if got := elemFeat(t, f, e, "hint_named"); got != want {
			t.Errorf("element %s hint_named = %v, want %v", f.BIDs[e], got, want)
		}
	}
}

// TestFeaturizeNamesOtherElementsKinds checks names_other on MiniWoB++'s
// identify-shape: the button whose text is the kind of the figure (its
// SVG tag's reading, Element.hint) is marked, and generic tags name
// nothing.
func TestFeaturizeNamesOtherElementsKinds(t *testing.T) {
	obs := &eventspb.Observation{Instruction: "Click the button that best describes the figure below.", Width: 160, Height: 200,
		Elements: []*eventspb.Element{
			{Bid: "fig", Role: "clickable", Box: box(60, 60, 30, 30), Hint: "polygon triangle"},
			{Bid: "r", Role: "button", Text: "Rectangle", Box: box(10, 120, 80, 20), Hint: "button"},
			{Bid: "t", Role: "button", Text: "Triangle", Box: box(10, 150, 80, 20), Hint: "button"},
			{Bid: "x", Role: "button", Text: "Button", Box: box(10, 180, 80, 20), Hint: "button"},
		}}
	a := DefaultArchitecture()
	f, err := a.Featurize(obs)
	if err != nil {
		t.Fatal(err)
	}
	for e, want := range []float32{0, 0, 1, 0} {
		if got := elemFeat(t, f, e, "names_other"); got != want {
			t.Errorf("element %s names_other = %v, want %v", f.BIDs[e], got, want)
		}
	}
}

// TestFeaturizeMarksSelectOptions checks is_option on MiniWoB++'s
// choose-list: a name the instruction gives is listed once, as an
// instruction word (the candidates are deduplicated), and is_option is
// what tells it from the instruction's other words; a multi-word option
// is marked too, and the button's text is not.
func TestFeaturizeMarksSelectOptions(t *testing.T) {
	obs := &eventspb.Observation{Instruction: "Select Kasey from the list and click Submit.", Width: 160, Height: 200,
		Elements: []*eventspb.Element{
			{Bid: "s", Role: "combobox", Text: "Ronda", Value: "Ronda", Box: box(10, 60, 100, 20),
				Options: []string{"Ronda", "Kasey", "Heard Island and McDonald Islands"}},
			{Bid: "b", Role: "button", Text: "Submit", Box: box(10, 100, 60, 20)},
		}}
	a := DefaultArchitecture()
	f, err := a.Featurize(obs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float32{"Kasey": 1, "list": 0, "Submit": 0, "Ronda": 1, "Heard Island and McDonald Islands": 1}
	for c, w := range want {
		k := slices.Index(f.Candidates, c)
		if k < 0 {
			t.Errorf("no candidate %q in %q", c, f.Candidates)
			continue
		}
		if got := candFeat(t, f, k, "is_option"); got != w {
			t.Errorf("candidate %q is_option = %v, want %v", c, got, w)
		}
	}
	if k := slices.Index(f.Candidates, "Kasey"); k >= 0 && candFeat(t, f, k, "from_page") != 0 {
		t.Errorf("candidate Kasey from_page = 1: it is listed as the instruction's word")
	}
}

// The instruction's word bag says what kind of task it is, not which seed:
// two episodes that differ only in their values (quoted, or literal) have
// the same bag, and one with other words does not.
func TestFeaturizeInstructionBagHidesValues(t *testing.T) {
	a := DefaultArchitecture()
	bag := func(instr string) string {
		t.Helper()
		f, err := a.Featurize(&eventspb.Observation{Instruction: instr, Width: 100, Height: 100})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(f.InstrTokens, f.InstrWeights)
	}
	for _, tc := range []struct{ a, b string }{
		{`Enter the password "tywv" into both text fields and press submit.`, `Enter the password "LY xJ V" into both text fields and press submit.`},
		{`Enter 4:28 PM as the time and press submit.`, `Enter 11:05 AM as the time and press submit.`},
		{`Select -3 with the spinner and hit Submit.`, `Select 7 with the spinner and hit Submit.`},
	} {
		if bag(tc.a) != bag(tc.b) {
			t.Errorf("bags differ:\n%q\n%q", tc.a, tc.b)
		}
	}
	if bag(`Click on the "Next" button.`) == bag(`Click on the "Next" link.`) {
		t.Error("the words around the value do not reach the bag")
	}
	if got, want := template([]string{"type", "ada", "99", "ada"}, [][]string{{"ada", "99"}, {"ada"}}), []string{"type", valueWord, valueWord}; !slices.Equal(got, want) {
		t.Errorf("template = %q, want %q (the longest value at each word)", got, want)
	}
}
