package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestFeaturizeStagesGolden specifies each of Featurize's stages on its own
// (testdata/stages): the stages up to the named one run, and what that one
// wrote is printed. TestFeaturizeGolden holds their sum; these say which
// stage a change of it comes from. Rewrite with
// `go test ./services/policy -run FeaturizeStagesGolden -rewrite`.
//
//	featurize stage=NAME [the arguments of TestFeaturizeGolden]...
//	<the Observation as protobuf text, without its frame>
func TestFeaturizeStagesGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/stages", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "featurize" {
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			var name string
			d.ScanArgs(t, "stage", &name)
			if !slices.ContainsFunc(featurizeStages, func(s featurizeStage) bool { return s.name == name }) {
				d.Fatalf(t, "unknown stage %q", name)
			}
			a, obs := goldenObservation(t, d)
			z, err := a.featurizeThrough(obs, name)
			if err != nil {
				return fmt.Sprintf("error: %v\n", err)
			}
			return dumpStage(z, name)
		})
	})
}

// dumpStage prints what stage name wrote.
func dumpStage(z *featurizer, name string) string {
	var b strings.Builder
	a, f := z.a, z.f
	E, K, F := a.MaxElements, a.MaxCandidates, len(elementFeatureNames)
	switch name {
	case "frame":
		fmt.Fprintf(&b, "boxes normalised by: %gx%g px\n", z.fw, z.fh)
		if z.img != nil {
			fmt.Fprintf(&b, "frame: %dx%d px, %g×%g per box px\n", z.img.Rect.Dx(), z.img.Rect.Dy(), z.scaleX, z.scaleY)
		} else {
			b.WriteString("frame: none\n")
		}
		hw := len(f.Frame) / 3
		fmt.Fprintf(&b, "model input: 3×%d×%d", a.FrameHeight, a.FrameWidth)
		for c, ch := range []string{"r", "g", "b"} {
			var sum float64
			for _, v := range f.Frame[c*hw : (c+1)*hw] {
				sum += float64(v)
			}
			fmt.Fprintf(&b, " mean_%s=%s", ch, num(float32(sum/float64(hw))))
		}
		b.WriteString("\n")
	case "instruction":
		fmt.Fprintf(&b, "words: %s\n", strings.Join(z.iw, " "))
		fmt.Fprintf(&b, "quotes: %q\n", z.quotes)
		fmt.Fprintf(&b, "bare quotes: %q\n", z.bareQuotes)
		var colours []string
		for _, c := range z.extraColours {
			colours = append(colours, c.name)
		}
		fmt.Fprintf(&b, "extra colours: %s\n", strings.Join(colours, " "))
		fmt.Fprintf(&b, "tokens: %s\n", tokens(f.InstrTokens, f.InstrWeights))
	case "elements", "typing-done", "choosing-done":
		for e, el := range z.els {
			fmt.Fprintf(&b, "element %d bid=%q weight=%s: %s\n", e, el.GetBid(), num(f.ElemWeights[e]), nonZero(elementFeatureNames, f.ElemFeats[e*F:(e+1)*F]))
			if name == "elements" {
				fmt.Fprintf(&b, "  words: %s\n", tokens(f.ElemTokens[e*a.ElemTokens:(e+1)*a.ElemTokens], f.ElemTokWeights[e*a.ElemTokens:(e+1)*a.ElemTokens]))
			}
		}
	case "cells":
		under := make([][]string, len(z.els))
		free := 0
		for g := range a.Cells() {
			e := slices.Index(f.CellElems[g*E:(g+1)*E], 1)
			if e < 0 {
				free++
				continue
			}
			under[e] = append(under[e], strconv.Itoa(g))
		}
		for e, el := range z.els {
			fmt.Fprintf(&b, "element %d bid=%q cells: %s\n", e, el.GetBid(), strings.Join(under[e], " "))
		}
		fmt.Fprintf(&b, "cells under no element: %d of %d\n", free, a.Cells())
	case "candidates":
		Fc, P := len(candidateFeatureNames), numPairFeatures
		fmt.Fprintf(&b, "keys: %d\n", f.Keys)
		for k, c := range f.Candidates {
			if k < f.Keys {
				continue
			}
			fmt.Fprintf(&b, "candidate %d %q: %s\n", k-f.Keys, c, nonZero(candidateFeatureNames, f.CandFeats[k*Fc:(k+1)*Fc]))
			for e := range f.BIDs {
				if row := f.PairFeats[(e*K+k)*P : (e*K+k+1)*P]; slices.ContainsFunc(row, func(v float32) bool { return v != 0 }) {
					fmt.Fprintf(&b, "  with element %d: %s\n", e, nonZero(pairFeatureNames, row))
				}
			}
		}
	case "select-masks":
		for e := range z.els {
			var allowed []string
			for k := f.Keys; k < len(f.Candidates); k++ {
				if f.CandMask[e*K+k] == 1 {
					allowed = append(allowed, strconv.Itoa(k-f.Keys))
				}
			}
			fmt.Fprintf(&b, "element %d texts allowed: %s\n", e, strings.Join(allowed, " "))
		}
	case "type-mask":
		for t := range a.NumTypes() {
			var targets []string
			for e := range z.els {
				if f.ElemTypeMask[t*E+e] != 0 {
					targets = append(targets, strconv.Itoa(e))
				}
			}
			if len(targets) == 0 {
				targets = []string{"-"}
			}
			fmt.Fprintf(&b, "%s allowed=%s elements: %s\n", a.ActionTypes[t], num(f.TypeMask[t]), strings.Join(targets, " "))
		}
	}
	return b.String()
}
