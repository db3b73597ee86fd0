package policy

import (
	"fmt"
	"image"
	"image/color"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// TestFeaturizeGolden is the featurizer as a specification
// (testdata/features): an observation in, what the network sees out. The
// actor and the learner featurize with the same code, and weights trained on
// one version of these features are wrong for another, so a change here is a
// FeaturesVersion bump. Rewrite with
// `go test ./services/policy -run FeaturizeGolden -rewrite` and read the diff.
//
//	featurize [frame=WxH] [rect=(x,y,w,h,rrggbb)]... [max-elements=E] [max-candidates=K]
//	<the Observation as protobuf text, without its frame>
//
// frame draws a white PNG of that size with the rects filled. The output
// lists only what is set: the allowed types, the instruction's word buckets,
// then per kept element and candidate its non-zero features by name, its
// word buckets and (elements) the types that may target it.
func TestFeaturizeGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/features", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "featurize" {
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			a, obs := goldenObservation(t, d)
			f, err := a.Featurize(obs)
			if err != nil {
				return fmt.Sprintf("error: %v\n", err)
			}
			return dumpFeatures(&a, f)
		})
	})
}

// goldenObservation reads a golden case's architecture and observation:
// the arguments of featurize (frame, rect, max-elements, max-candidates;
// others are left to the caller) and the Observation as protobuf text.
func goldenObservation(t *testing.T, d *datadriven.TestData) (Architecture, *eventspb.Observation) {
	t.Helper()
	a := DefaultArchitecture()
	obs := &eventspb.Observation{}
	if err := prototext.Unmarshal([]byte(d.Input), obs); err != nil {
		d.Fatalf(t, "unable to parse the observation: %v", err)
	}
	fills := map[image.Rectangle]color.RGBA{}
	var fw, fh int
	for _, arg := range d.CmdArgs {
		switch arg.Key {
		case "frame":
			if _, err := fmt.Sscanf(arg.Vals[0], "%dx%d", &fw, &fh); err != nil {
				d.Fatalf(t, "frame=%s: want WxH", arg.Vals[0])
			}
		case "rect":
			if len(arg.Vals) != 5 {
				d.Fatalf(t, "rect wants (x,y,w,h,rrggbb)")
			}
			var n [4]int
			for i := range n {
				n[i], _ = strconv.Atoi(arg.Vals[i])
			}
			c, err := strconv.ParseUint(arg.Vals[4], 16, 32)
			if err != nil {
				d.Fatalf(t, "rect colour %q: %v", arg.Vals[4], err)
			}
			fills[image.Rect(n[0], n[1], n[0]+n[2], n[1]+n[3])] = color.RGBA{R: uint8(c >> 16), G: uint8(c >> 8), B: uint8(c), A: 255}
		case "max-elements":
			a.MaxElements, _ = strconv.Atoi(arg.Vals[0])
		case "max-candidates":
			a.MaxCandidates, _ = strconv.Atoi(arg.Vals[0])
		case "stage":
		default:
			d.Fatalf(t, "unknown argument %q", arg.Key)
		}
	}
	if fw > 0 {
		obs.Frame = pngFrame(t, fw, fh, fills)
	}
	return a, obs
}

func dumpFeatures(a *Architecture, f *Features) string {
	var b strings.Builder
	var allowed []string
	for t, m := range f.TypeMask {
		if m != 0 {
			allowed = append(allowed, a.ActionTypes[t])
		}
	}
	fmt.Fprintf(&b, "types: %s\n", strings.Join(allowed, " "))
	fmt.Fprintf(&b, "frame: %gx%g px", f.FrameWidth, f.FrameHeight)
	if hw := len(f.Frame) / 3; hw > 0 {
		// The mean of each channel of the 3×H×W input (pixel/255 − 0.5).
		for c, name := range []string{"r", "g", "b"} {
			var sum float64
			for _, v := range f.Frame[c*hw : (c+1)*hw] {
				sum += float64(v)
			}
			fmt.Fprintf(&b, " mean_%s=%s", name, num(float32(sum/float64(hw))))
		}
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "instruction: %s\n", tokens(f.InstrTokens, f.InstrWeights))
	E, F := a.MaxElements, len(elementFeatureNames)
	for e, bid := range f.BIDs {
		fmt.Fprintf(&b, "element %d bid=%q centre=(%s,%s) weight=%s:\n", e, bid, num(f.Centers[e][0]), num(f.Centers[e][1]), num(f.ElemWeights[e]))
		fmt.Fprintf(&b, "  %s\n", nonZero(elementFeatureNames, f.ElemFeats[e*F:(e+1)*F]))
		fmt.Fprintf(&b, "  words: %s\n", tokens(f.ElemTokens[e*a.ElemTokens:(e+1)*a.ElemTokens], f.ElemTokWeights[e*a.ElemTokens:(e+1)*a.ElemTokens]))
		var types []string
		for t := range a.NumTypes() {
			if f.ElemTypeMask[t*E+e] != 0 {
				types = append(types, a.ActionTypes[t])
			}
		}
		fmt.Fprintf(&b, "  targets of: %s\n", strings.Join(types, " "))
		var allowed []string
		for k := f.Keys; k < len(f.Candidates); k++ {
			if f.CandMask[e*a.MaxCandidates+k] == 1 {
				allowed = append(allowed, strconv.Itoa(k-f.Keys))
			}
		}
		if len(allowed) < len(f.Candidates)-f.Keys { // only a select's row is narrowed
			fmt.Fprintf(&b, "  texts allowed: %s\n", strings.Join(allowed, " "))
		}
	}
	Fc := len(candidateFeatureNames)
	// The keys are the same on every page: their count, then the texts
	// numbered from 0.
	fmt.Fprintf(&b, "keys: %d\n", f.Keys)
	for k, c := range f.Candidates {
		if k < f.Keys {
			continue
		}
		fmt.Fprintf(&b, "candidate %d %q:\n", k-f.Keys, c)
		fmt.Fprintf(&b, "  %s\n", nonZero(candidateFeatureNames, f.CandFeats[k*Fc:(k+1)*Fc]))
		fmt.Fprintf(&b, "  words: %s\n", tokens(f.CandTokens[k*a.CandTokens:(k+1)*a.CandTokens], f.CandTokWeights[k*a.CandTokens:(k+1)*a.CandTokens]))
		P := len(pairFeatureNames)
		for e := range f.BIDs {
			if row := f.PairFeats[(e*a.MaxCandidates+k)*P : (e*a.MaxCandidates+k+1)*P]; slices.ContainsFunc(row, func(v float32) bool { return v != 0 }) {
				fmt.Fprintf(&b, "  with element %d: %s\n", e, nonZero(pairFeatureNames, row))
			}
		}
	}
	return b.String()
}

// num prints a float32 feature with the precision it has.
func num(v float32) string { return strconv.FormatFloat(float64(v), 'g', 5, 32) }

func nonZero(names []string, row []float32) string {
	var parts []string
	for i, v := range row {
		if v != 0 {
			parts = append(parts, names[i]+"="+num(v))
		}
	}
	if len(parts) == 0 {
		return "(all zero)"
	}
	return strings.Join(parts, " ")
}

// tokens prints the word buckets in use, each with its weight.
func tokens(ids []int64, weights []float32) string {
	var parts []string
	for i, id := range ids {
		if id != 0 {
			parts = append(parts, fmt.Sprintf("%d×%s", id, num(weights[i])))
		}
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, " ")
}
