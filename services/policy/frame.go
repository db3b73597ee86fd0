package policy

import (
	"image"
	"math"
	"slices"

	"golang.org/x/image/colornames"
)

// boxColour returns the mean RGB of img inside the box (in img pixels),
// each in [-0.5, 0.5]; zeros when the box misses the image.
func boxColour(img *image.RGBA, x, y, w, h float64) [3]float32 {
	r := image.Rect(int(x), int(y), int(x+w+0.5), int(y+h+0.5)).Intersect(img.Rect)
	if r.Empty() {
		return [3]float32{}
	}
	var s [3]float64
	for yy := r.Min.Y; yy < r.Max.Y; yy++ {
		row := img.Pix[yy*img.Stride:]
		for xx := r.Min.X; xx < r.Max.X; xx++ {
			p := row[4*xx:]
			s[0] += float64(p[0])
			s[1] += float64(p[1])
			s[2] += float64(p[2])
		}
	}
	n := float64(r.Dx() * r.Dy())
	return [3]float32{float32(s[0]/n/255 - 0.5), float32(s[1]/n/255 - 0.5), float32(s[2]/n/255 - 0.5)}
}

// boxForeground returns the mean colour (0..255) of the pixels inside the
// box that differ from its corners' colour (the background a shape sits
// on), and the fraction of the box they cover: a square fills its box, a
// circle about 0.79 of it, a triangle or diamond half. A box filled edge to
// edge (a swatch) has no background; its colour is the mean of all pixels
// and its fill 1.
func boxForeground(img *image.RGBA, x, y, w, h float64) ([3]float64, float32) {
	r := image.Rect(int(x), int(y), int(x+w+0.5), int(y+h+0.5)).Intersect(img.Rect)
	if r.Dx() < 2 || r.Dy() < 2 {
		return [3]float64{}, 0
	}
	px := func(xx, yy int) [3]float64 {
		p := img.Pix[yy*img.Stride+4*xx:]
		return [3]float64{float64(p[0]), float64(p[1]), float64(p[2])}
	}
	var bg [3]float64
	for _, c := range [][2]int{{r.Min.X, r.Min.Y}, {r.Max.X - 1, r.Min.Y}, {r.Min.X, r.Max.Y - 1}, {r.Max.X - 1, r.Max.Y - 1}} {
		p := px(c[0], c[1])
		for i := range bg {
			bg[i] += p[i] / 4
		}
	}
	var fg, all [3]float64
	n, total := 0, 0
	for yy := r.Min.Y; yy < r.Max.Y; yy++ {
		for xx := r.Min.X; xx < r.Max.X; xx++ {
			p := px(xx, yy)
			total++
			for i := range all {
				all[i] += p[i]
			}
			if d := math.Abs(p[0]-bg[0]) + math.Abs(p[1]-bg[1]) + math.Abs(p[2]-bg[2]); d > 60 {
				n++
				for i := range fg {
					fg[i] += p[i]
				}
			}
		}
	}
	if n < total/10 {
		// Nothing stands out from the corners: a uniformly filled box.
		for i := range all {
			all[i] /= float64(total)
		}
		return all, 1
	}
	for i := range fg {
		fg[i] /= float64(n)
	}
	return fg, float32(n) / float32(total)
}

// colourProto is a named colour and its RGB value.
type colourProto struct {
	name string
	rgb  [3]float64
}

// colourTerms are prototypes of the basic colour terms of English, the
// words an instruction names colours with.
var colourTerms = []colourProto{
	{"red", [3]float64{205, 35, 35}}, {"green", [3]float64{40, 150, 60}}, {"blue", [3]float64{30, 85, 205}},
	{"yellow", [3]float64{240, 210, 40}}, {"purple", [3]float64{120, 40, 180}}, {"orange", [3]float64{245, 130, 20}},
	{"black", [3]float64{20, 20, 20}}, {"pink", [3]float64{240, 115, 170}}, {"brown", [3]float64{125, 80, 40}},
	{"grey", [3]float64{140, 140, 140}}, {"white", [3]float64{245, 245, 245}},
}

// colourTerm names the colour nearest to c among the basic colour terms and
// extra, the CSS colours of namedColours (MiniWoB++'s click-color asks
// for lime, olive, cyan or magenta, which the nearest basic term would call
// green, brown or blue).
func colourTerm(c [3]float64, extra []colourProto) string {
	best, bestD := "", math.Inf(1)
	for _, set := range [][]colourProto{colourTerms, extra} {
		for _, t := range set {
			d := 0.0
			for i := range c {
				d += (c[i] - t.rgb[i]) * (c[i] - t.rgb[i])
			}
			if d < bestD {
				best, bestD = t.name, d
			}
		}
	}
	return best
}

// cssHues are the saturated CSS colours far from every basic term's
// prototype: always candidates, so that a cyan box is not called blue, nor a
// lime one green (click-color shows blue beside cyan).
var cssHues = []string{"lime", "cyan", "aqua", "magenta", "fuchsia", "olive", "navy", "teal", "maroon"}

// hueProtos are cssHues' prototypes, built once: every observation's
// featurization starts from them.
var hueProtos = appendNamedColours(nil, cssHues)

// namedColours returns cssHues and the CSS colours among words that are not
// basic terms, with their sRGB values.
func namedColours(words []string) []colourProto {
	return appendNamedColours(slices.Clip(hueProtos), words)
}

// appendNamedColours appends the CSS colours among words that are neither
// basic terms nor in out already.
func appendNamedColours(out []colourProto, words []string) []colourProto {
	for _, w := range words {
		c, ok := colornames.Map[w]
		if !ok || slices.ContainsFunc(colourTerms, func(t colourProto) bool { return t.name == w }) ||
			slices.ContainsFunc(out, func(t colourProto) bool { return t.name == w }) {
			continue
		}
		out = append(out, colourProto{w, [3]float64{float64(c.R), float64(c.G), float64(c.B)}})
	}
	return out
}
