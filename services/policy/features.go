package policy

import (
	"fmt"
	"image"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/frame"
	"github.com/asyncwebrl/asyncwebrl/services/internal/instruction"
)

// Features is one observation as the network sees it: flat row-major slices
// shaped as Architecture.InputSpecs, plus the maps back from the element and
// candidate indices to the bid and the text an action needs.
type Features struct {
	Frame          []float32 // [3,H,W]: the wire frame's thumbnail
	InstrTokens    []int64   // [T]
	InstrWeights   []float32 // [T]
	ElemFeats      []float32 // [E,F]
	ElemTokens     []int64   // [E,Lt]
	ElemTokWeights []float32 // [E,Lt]
	ElemWeights    []float32 // [E]
	ElemTypeMask   []float32 // [A,E]
	CandFeats      []float32 // [K,Fc]
	CandTokens     []int64   // [K,Lc]
	CandTokWeights []float32 // [K,Lc]
	CandMask       []float32 // [E+2,K]: candidate k may go with element row r (row E: no element; row E+1: a press's key)
	TypeMask       []float32 // [A]
	PairFeats      []float32 // [E+2,K,P]: rows E and E+1 (no element) stay zero
	CellElems      []float32 // [G,E]: 1 for the innermost kept element whose box holds cell g's centre

	// BIDs[e] is the bid of element e (len = number of valid elements).
	BIDs []string
	// Centers[e] is element e's box centre in wire-frame pixels.
	Centers [][2]float32
	// Selected[e] are element e's selected options when it is a listbox
	// (nil otherwise): a select of one more option keeps them.
	Selected [][]string
	// Candidates[k] is the text of candidate k (len = valid candidates):
	// the first Keys are PressKeys (a press's choices, on the key row
	// only), the others texts.
	Candidates []string
	Keys       int
	// FrameWidth and FrameHeight are the observation's wire-frame size in
	// pixels (the unit of boxes and of Action.x/y/delta_y).
	FrameWidth, FrameHeight float32
}

// Bytes is the memory of f's numeric arrays (the bulk of a sample a
// learner keeps in its replay; the strings beside them are small).
func (f *Features) Bytes() int {
	n := 0
	for _, a := range f.fields() {
		switch a := a.(type) {
		case []float32:
			n += 4 * len(a)
		case []int64:
			n += 8 * len(a)
		}
	}
	return n
}

// Element feature columns; elementFeatureNames names them in order.
const (
	efX = iota
	efY
	efW
	efH
	efInFrame
	efRole                            // role one-hot: efRole+roleButton .. efRole+roleOther
	efTextEmpty = iota + numRoles - 1 // the columns after the numRoles role columns
	efTextInInstr
	efQuoteCover
	efExactQuote
	efPhraseInInstr
	efQuoteInText
	efChecked
	efFocused
	efHasValue
	efValueIsQuote
	efDisabled
	efMeanR
	efMeanG
	efMeanB
	efOrder
	efColourNamed
	efFill
	efLastTarget
	efHintNamed
	efContextMatch
	efOrdinal
	efNamesOther
	efQuotesTyped
	efFieldsTyped
	efChoicesMade
	efIDIsValue
	numElemFeatures
)

// The element feature columns (F = len).
var elementFeatureNames = []string{
	"x", "y", "w", "h", "in_frame",
	"role_button", "role_link", "role_textbox", "role_checkbox", "role_radio", "role_select", "role_label", "role_clickable", "role_other",
	"text_empty", "text_in_instr", "quote_cover", "exact_quote", "phrase_in_instr", "quote_in_text",
	"checked", "focused", "has_value", "value_is_quote", "disabled",
	"mean_r", "mean_g", "mean_b",
	"order",
	"colour_named", "fill",
	"last_target",
	"hint_named", "context_match", "ordinal", "names_other",
	"quotes_typed", "fields_typed", "choices_made",
	"id_is_value",
}

// Candidate feature columns; candidateFeatureNames names them in order.
const (
	cfQuoted = iota
	cfSingleWord
	cfPosition
	cfNWords
	cfEqualsElemText
	cfInElemText
	cfEqualsElemValue
	cfAfterTypeVerb
	cfStopword
	cfHasDigit
	cfFromPage
	cfInInstr
	cfIsOption
	cfSpan
	cfCapitalised
	cfInnerMark
	cfFromMemory
	cfTypedBefore
	cfDerived
	cfUpperCase
	cfKey
	numCandFeatures
)

// Pair feature columns: one (element, candidate) pair each, added to that
// pair's text logit by a learnt weight per column; pairFeatureNames names
// them in order.
const (
	pfIntroInLabel = iota
	pfValueEquals
	pfOptionOf
	numPairFeatures
)

// The pair feature columns (P = len). Which field a value goes to is a
// relation between the two, which the bilinear of hashed words learnt in
// one hour and lost in the next two (login-user: the username typed into
// the password field as often as not); these columns state it.
var pairFeatureNames = []string{"intro_in_label", "value_equals", "option_of"}

// pairOn is a pair feature's value when it holds (0 when not). Each column
// reaches the logit through one learnt scalar, and Adam moves a scalar by
// at most the learning rate per update whatever its gradient: with 1, the
// hour at a62c7ff ended with intro_in_label's weight at 0.46 after 4,703
// updates (option_of's at 0.03), too weak to outvote the bilinear's
// guess, and login-user typed the password into both fields. At 4 the same
// updates move the logit four times as far (features version 10).
const pairOn = 4

// The candidate feature columns (Fc = len).
var candidateFeatureNames = []string{
	"quoted", "single_word", "position", "n_words", "equals_elem_text", "in_elem_text", "equals_elem_value",
	"after_type_verb", "stopword", "has_digit", "from_page", "in_instr", "is_option",
	"span", "capitalised", "inner_mark", "from_memory", "typed_before", "derived", "upper_case",
	"key",
}

const (
	roleButton = iota
	roleLink
	roleTextbox
	roleCheckbox
	roleRadio
	roleSelect
	roleLabel
	roleClickable
	roleOther
	numRoles
)

// roleClass folds ARIA roles (and the actor's tag fallbacks) into the role
// one-hot.
func roleClass(role string) int {
	switch strings.ToLower(role) {
	case "button", "menuitem", "tab", "switch":
		return roleButton
	case "link":
		return roleLink
	case "textbox", "searchbox", "spinbutton", "textarea", "input":
		return roleTextbox
	case "checkbox":
		return roleCheckbox
	case "radio":
		return roleRadio
	case "combobox", "listbox", "select":
		return roleSelect
	case "label":
		return roleLabel
	case "clickable":
		return roleClickable
	}
	return roleOther
}

// elemState is the element state the featurizer reads.
type elemState struct {
	checked, focused, disabled bool
	value                      string
}

// stateOf reads an Element's state: the actor fills checked, focused,
// disabled and value from the page (Element has all four).
func stateOf(el *eventspb.Element) elemState {
	return elemState{checked: el.GetChecked(), focused: el.GetFocused(), disabled: el.GetDisabled(), value: el.GetValue()}
}

// Featurize turns an observation into the network's inputs. It is pure and
// deterministic: the actor and the learner get bit-identical features from
// the same observation. An empty frame gives a zero frame; an undecodable one
// is an error.
func (a *Architecture) Featurize(obs *eventspb.Observation) (*Features, error) {
	z, err := a.featurizeThrough(obs, "")
	if err != nil {
		return nil, err
	}
	return z.f, nil
}

// featurizeThrough runs the stages up to and including the one called last
// (all of them when last is empty).
func (a *Architecture) featurizeThrough(obs *eventspb.Observation, last string) (*featurizer, error) {
	if obs == nil {
		return nil, fmt.Errorf("unable to featurize: nil observation")
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	A, E, K := a.NumTypes(), a.MaxElements, a.MaxCandidates
	T, Lt, Lc := a.MaxInstrTokens, a.ElemTokens, a.CandTokens
	F, Fc := len(elementFeatureNames), len(candidateFeatureNames)
	H, W := a.FrameHeight, a.FrameWidth
	f := &Features{
		Frame:          make([]float32, 3*H*W),
		InstrTokens:    make([]int64, T),
		InstrWeights:   make([]float32, T),
		ElemFeats:      make([]float32, E*F),
		ElemTokens:     make([]int64, E*Lt),
		ElemTokWeights: make([]float32, E*Lt),
		ElemWeights:    make([]float32, E),
		ElemTypeMask:   make([]float32, A*E),
		CandFeats:      make([]float32, K*Fc),
		CandTokens:     make([]int64, K*Lc),
		CandTokWeights: make([]float32, K*Lc),
		CandMask:       make([]float32, a.TextRows()*K),
		TypeMask:       make([]float32, A),
		PairFeats:      make([]float32, a.TextRows()*K*numPairFeatures),
		CellElems:      make([]float32, a.Cells()*E),
	}

	z := &featurizer{a: a, obs: obs, f: f}
	for _, st := range featurizeStages {
		if err := st.run(z); err != nil {
			return nil, err
		}
		if st.name == last {
			break
		}
	}
	return z, nil
}

// featurizeStages are Featurize's stages in their order; each reads what
// the ones before it left in the featurizer. The per-stage golden files
// (testdata/stages) run a prefix of them and print what the last one wrote.
var featurizeStages = []featurizeStage{
	{"frame", (*featurizer).frame},
	{"instruction", stage((*featurizer).instruction)},
	{"elements", stage((*featurizer).elements)},
	{"cells", stage((*featurizer).cells)},
	{"typing-done", stage((*featurizer).typingDone)},
	{"choosing-done", stage((*featurizer).choosingDone)},
	{"candidates", stage((*featurizer).candidates)},
	{"select-masks", stage((*featurizer).selectMasks)},
	{"type-mask", stage((*featurizer).typeMask)},
	{"ablations", stage((*featurizer).ablate)},
}

// featurizeStage is one named stage of Featurize.
type featurizeStage struct {
	name string
	run  func(*featurizer) error
}

// stage adapts a stage that cannot fail.
func stage(fn func(*featurizer)) func(*featurizer) error {
	return func(z *featurizer) error { fn(z); return nil }
}

// featurizer is one Featurize call's state, shared by its stages (in this
// order): frame, instruction, elements, typing and choosing done,
// candidates (and their pairs), the select masks, the type mask.
type featurizer struct {
	a   *Architecture
	obs *eventspb.Observation
	f   *Features
	// frame: the decoded frame (nil without one) and the size boxes are
	// normalised by, with the frame's pixels per box pixel.
	img                    *image.RGBA
	fw, fh, scaleX, scaleY float64
	// instruction: its words, the values it quotes (and literals), their
	// words and bare forms, and the colour names it uses.
	instr        string
	iw           []string
	instrSet     map[string]bool
	extraColours []colourProto
	quotes       []string
	quoteWords   [][]string
	bareQuotes   []string
	// elements: the kept ones, their words, values, label words and
	// options' words.
	els         []*eventspb.Element
	elemWords   [][]string
	elemValues  [][]string
	labelWords  []map[string]bool
	optionWords [][][]string
}

// frame decodes the wire frame into its thumbnail (the model input) and
// finds the pixel scale of boxes.
func (z *featurizer) frame() error {
	a, f, obs := z.a, z.f, z.obs
	H, W := a.FrameHeight, a.FrameWidth
	// Thumbnail and the pixel scale of boxes.
	fw, fh := float64(obs.GetWidth()), float64(obs.GetHeight())
	var scaleX, scaleY float64 = 1, 1
	img, err := frameImage(obs)
	if err != nil {
		return err
	}
	if img != nil {
		frame.Thumbnail(img, H, W, f.Frame)
		iw, ih := float64(img.Rect.Dx()), float64(img.Rect.Dy())
		if fw <= 0 || fh <= 0 {
			fw, fh = iw, ih
		}
		scaleX, scaleY = iw/fw, ih/fh
	}
	if fw <= 0 || fh <= 0 {
		// No frame and no size: normalise by the elements' extent.
		for _, el := range obs.GetElements() {
			b := el.GetBox()
			fw = math.Max(fw, float64(b.GetX()+b.GetW()))
			fh = math.Max(fh, float64(b.GetY()+b.GetH()))
		}
		fw, fh = math.Max(fw, 1), math.Max(fh, 1)
	}
	f.FrameWidth, f.FrameHeight = float32(fw), float32(fh)
	z.img, z.fw, z.fh, z.scaleX, z.scaleY = img, fw, fh, scaleX, scaleY
	return nil
}

// instruction tokenizes the instruction and finds the values to type.
func (z *featurizer) instruction() {
	a, f, obs := z.a, z.f, z.obs
	// Instruction.
	instr := obs.GetInstruction()
	iw := instruction.LowerWords(instr)
	instrSet := make(map[string]bool, len(iw))
	for _, w := range iw {
		instrSet[w] = true
	}
	// The values to type: quoted phrases, then unquoted literals (a date,
	// a time) kept whole.
	extraColours := namedColours(iw)
	quotes := instruction.QuotedPhrases(instr)
	for _, l := range instruction.Literals(instr) {
		if !slices.Contains(quotes, l) {
			quotes = append(quotes, l)
		}
	}
	quoteWords := make([][]string, 0, len(quotes))
	for _, q := range quotes {
		if qw := instruction.LowerWords(q); len(qw) > 0 {
			quoteWords = append(quoteWords, qw)
		}
	}
	fillTokens(template(iw, quoteWords), a.Vocab, f.InstrTokens, f.InstrWeights)
	bareQuotes := make([]string, len(quotes)) // what an element's id is compared with
	for i, q := range quotes {
		bareQuotes[i] = bareValue(q)
	}
	z.instr, z.iw, z.instrSet, z.extraColours, z.quotes, z.quoteWords, z.bareQuotes = instr, iw, instrSet, extraColours, quotes, quoteWords, bareQuotes
}

// elements writes every kept element's row, tokens, mask and box.
func (z *featurizer) elements() {
	a, f, obs := z.a, z.f, z.obs
	A, E := a.NumTypes(), a.MaxElements
	Lt := a.ElemTokens
	F := len(elementFeatureNames)
	img, fw, fh, scaleX, scaleY, iw, instrSet, extraColours, quoteWords, bareQuotes := z.img, z.fw, z.fh, z.scaleX, z.scaleY, z.iw, z.instrSet, z.extraColours, z.quoteWords, z.bareQuotes
	// Elements: those intersecting the frame first, then the rest, each in
	// document order.
	els := pickElements(obs.GetElements(), fw, fh, E)
	ordinal := instruction.Ordinal(iw)
	ranks := roleRanks(obs.GetElements())
	hints := make([][]string, len(els))
	for e, el := range els {
		hints[e] = instruction.LowerWords(el.GetHint())
	}
	kinds := hintKinds(hints)
	elemWords := make([][]string, len(els))
	elemValues := make([][]string, len(els))
	labelWords := make([]map[string]bool, len(els)) // text and hint: what names a field
	optionWords := make([][][]string, len(els))     // a select's options, for is_option
	for e, el := range els {
		st := stateOf(el)
		ew := instruction.LowerWords(el.GetText())
		elemWords[e] = ew
		elemValues[e] = instruction.LowerWords(st.value)
		labelWords[e] = make(map[string]bool, len(ew)+len(hints[e]))
		for _, w := range slices.Concat(ew, hints[e]) {
			labelWords[e][w] = true
		}
		for _, o := range el.GetOptions() {
			optionWords[e] = append(optionWords[e], instruction.LowerWords(o))
		}
		b := el.GetBox()
		bx, by, bw, bh := float64(b.GetX()), float64(b.GetY()), float64(b.GetW()), float64(b.GetH())
		row := f.ElemFeats[e*F : (e+1)*F]
		row[efX], row[efY] = clip01(bx/fw), clip01(by/fh)
		row[efW], row[efH] = clip01(bw/fw), clip01(bh/fh)
		row[efInFrame] = bool01(bx < fw && by < fh && bx+bw > 0 && by+bh > 0)
		rc := roleClass(el.GetRole())
		row[efRole+rc] = 1
		row[efTextEmpty] = bool01(len(ew) == 0)
		if len(ew) > 0 {
			hit := 0
			for _, w := range ew {
				if instrSet[w] {
					hit++
				}
			}
			row[efTextInInstr] = float32(hit) / float32(len(ew))
		}
		ewSet := make(map[string]bool, len(ew))
		for _, w := range ew {
			ewSet[w] = true
		}
		for _, q := range quoteWords {
			hit := 0
			for _, w := range q {
				if ewSet[w] {
					hit++
				}
			}
			row[efQuoteCover] = max(row[efQuoteCover], float32(hit)/float32(len(q)))
			if equalWords(ew, q) {
				row[efExactQuote] = 1
			}
			if instruction.ContainsRun(ew, q) {
				row[efQuoteInText] = 1
			}
			if equalWords(elemValues[e], q) {
				row[efValueIsQuote] = 1
			}
		}
		row[efPhraseInInstr] = bool01(instruction.ContainsRun(iw, ew))
		row[efChecked], row[efFocused] = bool01(st.checked), bool01(st.focused)
		row[efHasValue], row[efDisabled] = bool01(st.value != ""), bool01(st.disabled)
		if img != nil {
			c := boxColour(img, bx*scaleX, by*scaleY, bw*scaleX, bh*scaleY)
			row[efMeanR], row[efMeanG], row[efMeanB] = c[0], c[1], c[2]
			fg, fill := boxForeground(img, bx*scaleX, by*scaleY, bw*scaleX, bh*scaleY)
			row[efFill] = fill
			if name := colourTerm(fg, extraColours); name != "" && (instrSet[name] || (name == "grey" && instrSet["gray"])) {
				row[efColourNamed] = 1
			}
		}
		row[efOrder] = float32(e) / float32(E)
		row[efLastTarget] = bool01(el.GetBid() != "" && el.GetBid() == obs.GetPreviousBid())
		hw := hints[e]
		row[efHintNamed] = hintNamed(hw, quoteWords, instrSet)
		row[efContextMatch] = contextMatch(iw, ew, hw, instruction.LowerWords(el.GetContext()))
		row[efOrdinal] = bool01(ordinal > 0 && ranks[el] == ordinal)
		row[efNamesOther] = namesOther(ew, hw, kinds)
		// An id that is a value names the element the instruction asks for
		// where nothing visible does: grid-coordinate's points are unlabelled
		// circles with ids "(2,-1)". Compared whole, not as words: Words
		// drops the minus sign, and (2,1) is another point.
		if id := bareValue(el.GetDomId()); id != "" {
			row[efIDIsValue] = bool01(slices.Contains(bareQuotes, id))
		}
		fillTokens(ew, a.Vocab, f.ElemTokens[e*Lt:(e+1)*Lt], f.ElemTokWeights[e*Lt:(e+1)*Lt])
		f.ElemWeights[e] = 1 / float32(len(els))
		f.BIDs = append(f.BIDs, el.GetBid())
		f.Centers = append(f.Centers, [2]float32{float32(bx + bw/2), float32(by + bh/2)})
		f.Selected = append(f.Selected, el.GetSelected())
		for t := range A {
			if elementEligible(a.TypeAt(t), rc) {
				f.ElemTypeMask[t*E+e] = 1
			}
		}
	}
	z.els, z.elemWords, z.elemValues, z.labelWords, z.optionWords = els, elemWords, elemValues, labelWords, optionWords
}

// cells tells each cell of the point head which kept element is under its
// centre: the innermost (smallest) box holding it, as a click there would
// hit, so the point head can aim at what the element head knows by name
// (drag the item the instruction names) as well as at what only the frame
// shows (an SVG drawing, a canvas).
func (z *featurizer) cells() {
	a, f := z.a, z.f
	E := a.MaxElements
	for g := range a.Cells() {
		cx, cy := a.CellCenter(g, f.FrameWidth, f.FrameHeight)
		best, area := -1, math.Inf(1)
		for e, el := range z.els {
			b := el.GetBox()
			if cx < b.GetX() || cy < b.GetY() || cx >= b.GetX()+b.GetW() || cy >= b.GetY()+b.GetH() {
				continue
			}
			if s := float64(b.GetW()) * float64(b.GetH()); s < area {
				best, area = e, s
			}
		}
		if best >= 0 {
			f.CellElems[g*E+best] = 1
		}
	}
}

// typingDone tells every element whether the typing is done.
func (z *featurizer) typingDone() {
	f := z.f
	F := len(elementFeatureNames)
	quoteWords, els, elemWords, elemValues := z.quoteWords, z.els, z.elemWords, z.elemValues
	// What typing is done, told to every element (the type head reads it
	// through their pool, a submit button's pointer row through its own):
	// every value the instruction quotes is in some field, and every text
	// field holds one. A filled form looks like an empty one otherwise but
	// for two rows of value_is_quote among a page's elements, and the
	// policy that had learnt which value goes where kept filling the fields
	// of login-user and enter-password instead of pressing the button.
	//
	// A quoted phrase that is the whole text of a button or link names what
	// to click, not a value to type: on click-button (`Click on the "Next"
	// button`, with text fields among its distractors) the form looked
	// untyped for ever, as enter-text's does before typing, and the policy
	// filled the distractor fields (in the hour at 521c07d, after version
	// 150: all 24 actions of the 4 failed greedy episodes were FILL, 47 of
	// 49 of the 9 failed sampled ones, and half of the successful greedy
	// episodes' actions). With no value left to type, both features hold.
	//
	// An instruction that quotes nothing names no value to check the
	// fields against (copy-text: "Copy the code shown below into the box
	// and press Send."): typing is done when every text field holds
	// something (features v19). Without it a filled box looked like an
	// empty one but for its value's own columns, and on copy-text's
	// held-out site the greedy policy typed the code and never pressed the
	// button (28 of 32 failed episodes after the hour at b27001a).
	if len(quoteWords) == 0 {
		fields, filled := 0, 0
		for _, el := range els {
			if roleClass(el.GetRole()) == roleTextbox {
				fields++
				if strings.TrimSpace(el.GetValue()) != "" {
					filled++
				}
			}
		}
		done := bool01(fields > 0 && filled == fields)
		for e := range els {
			f.ElemFeats[e*F+efQuotesTyped] = done
			f.ElemFeats[e*F+efFieldsTyped] = done
		}
	}
	if len(quoteWords) > 0 {
		values := slices.DeleteFunc(slices.Clone(quoteWords), func(q []string) bool {
			for e, el := range els {
				if rc := roleClass(el.GetRole()); (rc == roleButton || rc == roleLink) && equalWords(elemWords[e], q) {
					return true
				}
			}
			return false
		})
		quotesTyped := true
		for _, q := range values {
			if !slices.ContainsFunc(elemValues, func(v []string) bool { return equalWords(v, q) }) {
				quotesTyped = false
				break
			}
		}
		fields, typed := 0, 0
		for e, el := range els {
			if roleClass(el.GetRole()) == roleTextbox {
				fields++
				if f.ElemFeats[e*F+efValueIsQuote] == 1 {
					typed++
				}
			}
		}
		for e := range els {
			f.ElemFeats[e*F+efQuotesTyped] = bool01(quotesTyped)
			f.ElemFeats[e*F+efFieldsTyped] = bool01(len(values) == 0 || fields > 0 && typed == fields)
		}
	}
}

// choosingDone tells every element whether the choosing is done.
func (z *featurizer) choosingDone() {
	f := z.f
	F := len(elementFeatureNames)
	iw, els, elemValues, optionWords := z.iw, z.els, z.elemValues, z.optionWords
	// What choosing is done, told to every element as the typing is: every
	// choice control the instruction names is chosen and no other box is
	// ticked. Named: a select that offers an option the instruction names
	// (chosen: it holds one), a checkbox or radio whose label is a run of
	// the instruction (chosen: checked). On choose-list the first option is
	// preselected and is the named one in about a fifth of the episodes, so
	// clicking Submit at once paid in 47 of 250 training episodes of the
	// hour at 521c07d and the greedy policy did only that (32%, the
	// random-init policy's score); click-option's greedy policy pressed
	// Submit before any radio in some of its failures. Nothing but the
	// controls' own rows told a made choice from an unmade one.
	named, chosen, stray := 0, 0, false
	for e, el := range els {
		row := f.ElemFeats[e*F : (e+1)*F] // phrase_in_instr and checked, set above
		switch rc := roleClass(el.GetRole()); {
		case len(optionWords[e]) > 0:
			var offers, holds bool
			for _, o := range optionWords[e] {
				if instruction.ContainsRun(iw, o) {
					offers = true
					holds = holds || equalWords(elemValues[e], o)
				}
			}
			if offers {
				named++
				if holds {
					chosen++
				}
			}
		case rc == roleCheckbox || rc == roleRadio:
			switch {
			case row[efPhraseInInstr] == 1:
				named++
				if row[efChecked] == 1 {
					chosen++
				}
			case row[efChecked] == 1 && rc == roleCheckbox:
				stray = true
			}
		}
	}
	if named > 0 && chosen == named && !stray {
		for e := range els {
			f.ElemFeats[e*F+efChoicesMade] = 1
		}
	}
}

// candidates writes the text candidates' rows, tokens and element pairs.
func (z *featurizer) candidates() {
	a, f := z.a, z.f
	E, K := a.MaxElements, a.MaxCandidates
	Lc := a.CandTokens
	Fc := len(candidateFeatureNames)
	instr, iw, quotes, els, elemWords, elemValues, labelWords, optionWords := z.instr, z.iw, z.quotes, z.els, z.elemWords, z.elemValues, z.labelWords, z.optionWords
	// Text candidates: quoted phrases, then single instruction words, then
	// the kept elements' texts, values and options.
	var cs candidateList
	f.Candidates, cs = candidates(z.obs, quotes, els, K, !a.ablates(AblateTaskSpecific), a.TypeIndex(eventspb.ActionType_ACTION_TYPE_PRESS) >= 0)
	f.Keys = cs.keys
	nQuoted, nSpans, nInstr := cs.quoted, cs.spans, cs.instr
	typed := map[string]bool{} // the values earlier steps typed or chose
	for _, st := range z.obs.GetMemory() {
		if t := strings.ToLower(strings.TrimSpace(st.GetText())); t != "" {
			typed[t] = true
		}
	}
	for k, c := range f.Candidates {
		cw := instruction.LowerWords(c)
		row := f.CandFeats[k*Fc : (k+1)*Fc]
		if k < cs.keys {
			// A key: its name's words, and the key row alone.
			row[cfKey] = 1
			fillTokens(cw, a.Vocab, f.CandTokens[k*Lc:(k+1)*Lc], f.CandTokWeights[k*Lc:(k+1)*Lc])
			f.CandMask[a.KeyRow()*K+k] = 1
			continue
		}
		isQuote := k < nQuoted
		isSpan := k >= cs.derived && k < nSpans
		row[cfQuoted] = bool01(isQuote)
		row[cfSpan] = bool01(isSpan)
		row[cfCapitalised] = bool01(capitalised(c))
		row[cfInnerMark] = bool01(innerMark(c))
		row[cfFromPage] = bool01(k >= nInstr && k < cs.page)
		row[cfFromMemory] = bool01(k >= cs.page)
		row[cfTypedBefore] = bool01(typed[strings.ToLower(c)])
		row[cfDerived] = bool01(k >= nQuoted && k < cs.derived)
		row[cfUpperCase] = bool01(strings.ToUpper(c) == c && strings.ToLower(c) != c)
		row[cfInInstr] = bool01(instruction.ContainsRun(iw, cw))
		row[cfSingleWord] = bool01(len(cw) == 1 && !isQuote)
		if i := instruction.IndexRun(iw, cw); i >= 0 {
			row[cfPosition] = float32(i) / float32(max(len(iw), 1))
			if i > 0 && typeVerbs[iw[i-1]] || i > 1 && typeVerbs[iw[i-2]] {
				row[cfAfterTypeVerb] = 1
			}
		}
		row[cfNWords] = min(float32(len(cw))/4, 1)
		for e := range els {
			if equalWords(elemWords[e], cw) {
				row[cfEqualsElemText] = 1
			}
			if instruction.ContainsRun(elemWords[e], cw) {
				row[cfInElemText] = 1
			}
			if equalWords(elemValues[e], cw) {
				row[cfEqualsElemValue] = 1
			}
			// A select's option: what SELECT_OPTION takes. The candidates
			// are deduplicated, so an option that is also an instruction
			// word ("Select Kasey from the list") is listed as that word,
			// not from the page, and only this says it can be selected.
			if slices.ContainsFunc(optionWords[e], func(o []string) bool { return equalWords(o, cw) }) {
				row[cfIsOption] = 1
			}
		}
		// The pairs: the field whose label (or kind: "input password")
		// is the word that introduces this value, the field that already
		// holds it, the select that offers it.
		var intro string // only a value (quoted, a literal, or a span) has one
		if w := instruction.Introducer(instr, c); isQuote && !instruction.IsStopword(w) {
			intro = w
		} else if isSpan {
			intro = instruction.ValueIntroducer(instr, c)
		}
		for e := range els {
			pair := f.PairFeats[(e*K+k)*numPairFeatures : (e*K+k+1)*numPairFeatures]
			pair[pfIntroInLabel] = pairOn * bool01(intro != "" && labelWords[e][intro])
			pair[pfValueEquals] = pairOn * bool01(len(cw) > 0 && (equalWords(elemValues[e], cw) ||
				containsFold(f.Selected[e], c)))
			pair[pfOptionOf] = pairOn * bool01(slices.ContainsFunc(optionWords[e], func(o []string) bool { return equalWords(o, cw) }))
		}
		row[cfStopword] = bool01(len(cw) == 1 && instruction.IsStopword(cw[0]))
		row[cfHasDigit] = bool01(strings.ContainsAny(c, "0123456789"))
		toks := cw
		if isQuote && intro != "" && len(cw) < Lc {
			// A value carries the word that introduces it (`the password
			// "UWH"`), which is what matches it to its field's label. A
			// span's introducer reaches its pairs only: inside a run the
			// word before a span is often the run's own ("Heard" of
			// "Heard Island"), and in the tokens it would blur the span.
			toks = append(slices.Clone(cw), intro)
		}
		fillTokens(toks, a.Vocab, f.CandTokens[k*Lc:(k+1)*Lc], f.CandTokWeights[k*Lc:(k+1)*Lc])
		for r := range E + 1 {
			f.CandMask[r*K+k] = 1
		}
	}
}

// selectMasks lets a select's row allow only its options.
func (z *featurizer) selectMasks() {
	a, f := z.a, z.f
	K := a.MaxCandidates
	els := z.els
	// A select's row allows only its options. SELECT_OPTION drew its text
	// from every candidate, and in the hour at 7aaea7a at least 109 of
	// choose-list's 165 selections named an instruction word ("click",
	// "from") or a label of the benchmark's reward display ("Last
	// reward:"): steps that changed nothing. A select none of whose options
	// is a candidate keeps them all (its row must offer a choice).
	for e := range els {
		row := f.CandMask[e*K : e*K+len(f.Candidates)]
		offered := 0
		for k := range row {
			if f.PairFeats[(e*K+k)*numPairFeatures+pfOptionOf] != 0 {
				offered++
			}
		}
		if offered == 0 {
			continue
		}
		for k := range row {
			row[k] = bool01(f.PairFeats[(e*K+k)*numPairFeatures+pfOptionOf] != 0)
		}
	}
}

// typeMask allows a type when it has something to act on.
func (z *featurizer) typeMask() {
	a, f := z.a, z.f
	A, E := a.NumTypes(), a.MaxElements
	els := z.els
	// Type mask: a type is allowed when it has something to act on.
	for t := range A {
		typ := a.TypeAt(t)
		ok := true
		if UsesElement(typ) {
			ok = false
			for e := range els {
				if f.ElemTypeMask[t*E+e] == 1 {
					ok = true
					break
				}
			}
		}
		if UsesText(typ) {
			n := len(f.Candidates) - f.Keys // the texts
			if UsesKey(typ) {
				n = f.Keys
			}
			ok = ok && n > 0
		}
		// A point is aimed at what the frame shows: none, no point.
		if UsesPoint(typ) && z.img == nil {
			ok = false
		}
		f.TypeMask[t] = bool01(ok)
	}
}

// frameImage decodes the observation's wire frame, or returns nil when it
// has none.
func frameImage(obs *eventspb.Observation) (*image.RGBA, error) {
	if len(obs.GetFrame()) == 0 {
		return nil, nil
	}
	return frame.Decode(obs.GetFrame(), obs.GetFrameFormat(), frame.MaxWireSide)
}

// elementEligible says which roles an action type may target: FILL only
// text fields, SELECT_OPTION only selects, the other element types any
// element.
func elementEligible(t eventspb.ActionType, role int) bool {
	switch t {
	case eventspb.ActionType_ACTION_TYPE_FILL:
		return role == roleTextbox
	case eventspb.ActionType_ACTION_TYPE_SELECT_OPTION:
		return role == roleSelect
	}
	return UsesElement(t)
}

// pickElements keeps at most n elements: those whose box intersects the
// frame first, then the others, each group in document order.
func pickElements(all []*eventspb.Element, fw, fh float64, n int) []*eventspb.Element {
	out := make([]*eventspb.Element, 0, min(n, len(all)))
	for pass := range 2 {
		for _, el := range all {
			if len(out) == n {
				return out
			}
			if el == nil {
				continue
			}
			b := el.GetBox()
			in := float64(b.GetX()) < fw && float64(b.GetY()) < fh && float64(b.GetX()+b.GetW()) > 0 && float64(b.GetY()+b.GetH()) > 0
			if in == (pass == 0) {
				out = append(out, el)
			}
		}
	}
	return out
}

// candidateList says where each group of candidates ends: candidates
// [0, keys) are PressKeys (when the policy presses), [keys, quoted) the
// quoted values, [quoted, derived) the values derived
// from them and from the page (derivedValues), [derived, spans) the
// instruction's spans, [spans, instr) its other words, [instr, page) the
// current page's texts, [page, len) earlier pages' (the memory).
type candidateList struct{ keys, quoted, derived, spans, instr, page int }

// candidates lists the text choices, deduplicated case-insensitively, at
// most k: the quoted phrases in order, then the values derived from them
// and the page (their case variants, arithmetic answers), then the instruction's unquoted
// spans of up to maxSpanWords tokens (a name, an address, an email or a
// username typed whole), then its words, then the page's text: each kept
// element's text, value and options (a select's), in the elements' order,
// for tasks whose text is on the page (copy a textarea, pick an option the
// instruction names in several words), then the spans of the page's text
// lines (text no element holds: a code in a <b>) and of the fields' values
// longer than a span (features v19), and last the spans of the
// earlier pages' text lines in the memory, newest page first (a phone
// number read two pages ago). A page text without a word (letters or
// digits) is left out; when k runs out, the memory goes first. Before them
// all, when the policy presses, come PressKeys: a key is not a text (its
// own group, kept apart from the texts' deduplication: a page's "Home"
// link is a text too).
func candidates(obs *eventspb.Observation, quotes []string, els []*eventspb.Element, k int, derive, keys bool) (out []string, cs candidateList) {
	instr := obs.GetInstruction()
	if keys {
		out = append(out, PressKeys[:min(len(PressKeys), k)]...)
	}
	cs.keys = len(out)
	seen := map[string]bool{}
	add := func(s string) {
		key := strings.ToLower(s)
		if len(out) < k && !seen[key] {
			seen[key] = true
			out = append(out, s)
		}
	}
	for _, q := range quotes {
		add(q)
	}
	cs.quoted = len(out)
	var derived []string
	if derive {
		derived = derivedValues(instr, quotes, obs.GetPageText())
	}
	for _, d := range derived {
		// A case variant differs from its phrase in case only: it is
		// deduplicated by exact text, the other groups ignoring case.
		if len(out) < k && !slices.Contains(out, d) {
			seen[strings.ToLower(d)] = true
			out = append(out, d)
		}
	}
	cs.derived = len(out)
	for _, sp := range instruction.Spans(instr, maxSpanWords) {
		add(sp)
	}
	cs.spans = len(out)
	for _, w := range instruction.Words(instr) {
		add(w)
	}
	cs.instr = len(out)
	page := func(s string) {
		if s = strings.TrimSpace(s); len(instruction.Words(s)) > 0 {
			add(s)
		}
	}
	for _, el := range els {
		page(el.GetText())
		page(el.GetValue())
		for _, o := range el.GetOptions() {
			page(o)
		}
	}
	for _, l := range obs.GetPageText() {
		for _, sp := range instruction.Spans(l, maxSpanWords) {
			page(sp)
		}
	}
	for _, el := range els {
		// A field's text longer than a span (a textarea's, as far as it
		// is in view): its spans, as a page line's (scroll-text's last
		// word).
		if v := el.GetValue(); len(instruction.Words(v)) > maxSpanWords {
			for _, sp := range instruction.Spans(v, maxSpanWords) {
				page(sp)
			}
		}
	}
	cs.page = len(out)
	for _, st := range obs.GetMemory() {
		for _, l := range st.GetPageText() {
			for _, sp := range instruction.Spans(l, maxSpanWords) {
				page(sp)
			}
		}
	}
	return out, cs
}

// maxSpanWords is the longest unquoted span of the instruction offered as
// a text: three tokens hold a street ("12 Oak Road") and a name with a
// middle name.
const maxSpanWords = 3

// capitalised reports whether every word of s starts with an upper-case
// letter or a digit, and one with a letter: how names, places and streets
// are written.
func capitalised(s string) bool {
	ws := instruction.Words(s)
	letter := false
	for _, w := range ws {
		r := []rune(w)[0]
		switch {
		case unicode.IsUpper(r):
			letter = true
		case unicode.IsDigit(r):
		default:
			return false
		}
	}
	return letter
}

// innerMark reports whether s holds punctuation between its words (an
// email's "@" and ".", a username's "_", a phone number's "-", a time
// zone's "/"): a token typed whole that no single word is.
func innerMark(s string) bool {
	for _, tok := range strings.Fields(s) {
		if len(instruction.Words(tok)) > 1 {
			return true
		}
	}
	return false
}

func bool01(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

func clip01(v float64) float32 {
	if math.IsNaN(v) {
		return 0
	}
	return float32(math.Min(1, math.Max(0, v)))
}
