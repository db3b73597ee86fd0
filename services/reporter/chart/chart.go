package chart

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Series is one line: points (X[i], Y[i]) drawn in order; NaN Y values break the line.
// (Infinite Y values break it too: they have no place on the axis.)
type Series struct {
	Name string
	X, Y []float64
}

// Chart describes one plot.
type Chart struct {
	Title, XLabel, YLabel string
	// YMin, YMax fix the y axis when YMax > YMin; otherwise it is fitted to the data.
	YMin, YMax float64
	// HLines are horizontal reference lines (e.g. a target of 0.8), dashed, labelled.
	HLines        []HLine
	Series        []Series
	Width, Height int // default 900x500 when zero
}

// HLine is a horizontal reference line at Y, drawn dashed with its Label.
type HLine struct {
	Y     float64
	Label string
}

const (
	defaultWidth, defaultHeight = 900, 500
	marginLeft, marginRight     = 80, 20
	marginTop, marginBottom     = 40, 50
	textScale                   = 2 // 3x5 glyphs drawn 6x10: legible without antialiasing
	titleScale                  = 3
	numSeriesColours            = 8
)

// Palette indices. White is index 0 so a fresh image.Paletted is already the background.
const (
	white uint8 = iota
	black
	grey
	firstSeries
)

var palette = color.Palette{
	color.RGBA{0xff, 0xff, 0xff, 0xff},
	color.RGBA{0x00, 0x00, 0x00, 0xff},
	color.RGBA{0x80, 0x80, 0x80, 0xff},
	// Series colours: matplotlib's tab10 without its grey and olive, so no
	// series can be mistaken for a reference line or for another series.
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x17, 0xbe, 0xcf, 0xff},
}

// seriesColour is the palette index of series i; colours repeat after 8.
func seriesColour(i int) uint8 { return firstSeries + uint8(i%numSeriesColours) }

// PNG renders the chart. It returns an error (never panics) for a chart with no points, mismatched X/Y lengths, or non-finite X.
func (c Chart) PNG() ([]byte, error) {
	img, err := c.render()
	if err != nil {
		return nil, fmt.Errorf("unable to render chart: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("unable to encode png: %w", err)
	}
	return buf.Bytes(), nil
}

// WriteFile renders and writes atomically (temp file + rename).
func (c Chart) WriteFile(path string) error {
	data, err := c.PNG()
	if err != nil {
		return err
	}
	// The temp file is in the target directory so the rename stays on one
	// filesystem: a reader sees the old chart or the new one, never half a file.
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("unable to create temp file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // cleans up on failure; after the rename there is nothing left to remove
	_, err = f.Write(data)
	if err == nil {
		// CreateTemp makes the file 0600; a chart is meant to be read by others (a web server, a colleague).
		err = f.Chmod(0o644)
	}
	if err == nil {
		// Sync before rename so a crash cannot leave the new name pointing at an empty file.
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("unable to write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("unable to rename %s to %s: %w", tmp, path, err)
	}
	return nil
}

// size is the image size, with the defaults applied.
func (c Chart) size() (int, int) {
	return cmp.Or(c.Width, defaultWidth), cmp.Or(c.Height, defaultHeight)
}

// plotRect is the data area of a w x h image; the axes sit just outside it.
func plotRect(w, h int) image.Rectangle {
	return image.Rect(marginLeft, marginTop, w-marginRight, h-marginBottom)
}

// axis maps data values in [lo, hi] linearly to pixels in [pix0, pix1].
type axis struct{ lo, hi, step, pix0, pix1 float64 }

// pix is only called with values inside [lo, hi] (segments are clipped first), so the int conversion cannot overflow.
func (a axis) pix(v float64) int {
	return int(math.Round(a.pix0 + (v-a.lo)/(a.hi-a.lo)*(a.pix1-a.pix0)))
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// axes validates the data and returns the x and y ranges with their tick steps.
func (c Chart) axes() (x, y axis, err error) {
	x.lo, x.hi = math.Inf(1), math.Inf(-1)
	y.lo, y.hi = x.lo, x.hi
	n := 0
	for _, s := range c.Series {
		if len(s.X) != len(s.Y) {
			return x, y, fmt.Errorf("series %q has %d x values but %d y values", s.Name, len(s.X), len(s.Y))
		}
		for i, xv := range s.X {
			if !finite(xv) {
				return x, y, fmt.Errorf("series %q: x[%d] = %v is not finite", s.Name, i, xv)
			}
			x.lo, x.hi = math.Min(x.lo, xv), math.Max(x.hi, xv)
			if yv := s.Y[i]; finite(yv) {
				y.lo, y.hi = math.Min(y.lo, yv), math.Max(y.hi, yv)
				n++
			}
		}
	}
	if n == 0 {
		return x, y, errors.New("no points with finite y to plot")
	}
	x.lo, x.hi, x.step = fit(x.lo, x.hi, false)
	if finite(c.YMin) && finite(c.YMax) && c.YMax > c.YMin {
		y.lo, y.hi, y.step = c.YMin, c.YMax, niceStep(c.YMax-c.YMin)
	} else {
		// Reference lines count when fitting: a target off the chart would be useless.
		for _, h := range c.HLines {
			if finite(h.Y) {
				y.lo, y.hi = math.Min(y.lo, h.Y), math.Max(y.hi, h.Y)
			}
		}
		y.lo, y.hi, y.step = fit(y.lo, y.hi, true)
	}
	if !finite(x.hi-x.lo) || !finite(y.hi-y.lo) || !(x.step > 0) || !(y.step > 0) {
		return x, y, errors.New("data range too large to plot")
	}
	return x, y, nil
}

// fit widens a degenerate range and, if extend, rounds it out to whole ticks.
func fit(lo, hi float64, extend bool) (float64, float64, float64) {
	if lo == hi {
		d := math.Max(math.Abs(lo)*0.1, 0.5)
		lo, hi = lo-d, hi+d
	}
	step := niceStep(hi - lo)
	if extend {
		lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	}
	return lo, hi, step
}

// niceStep is the 1, 2 or 5 x 10^k step giving about 5 ticks over span.
func niceStep(span float64) float64 {
	raw := span / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// ticks are the multiples of a.step within [lo, hi]; capped so float
// precision loss on huge values cannot loop for long.
func (a axis) ticks() []float64 {
	var out []float64
	for i := math.Ceil(a.lo/a.step - 1e-9); len(out) < 20; i++ {
		v := i * a.step
		if v > a.hi+a.step*1e-9 {
			break
		}
		out = append(out, v)
	}
	return out
}

// formatTick formats v compactly (0, 0.2, 1.5k, 2M) with just enough
// decimals to tell ticks step apart.
func formatTick(v, step float64) string {
	suffix := ""
	switch a := math.Abs(v); {
	case a >= 1e9:
		v, step, suffix = v/1e9, step/1e9, "G"
	case a >= 1e6:
		v, step, suffix = v/1e6, step/1e6, "M"
	case a >= 1e3:
		v, step, suffix = v/1e3, step/1e3, "k"
	}
	prec := 0
	if d := -math.Floor(math.Log10(step)); d > 0 {
		prec = int(math.Min(d, 15))
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s + suffix
}

func (c Chart) render() (*image.Paletted, error) {
	w, h := c.size()
	if w < 200 || h < 150 || w > 10000 || h > 10000 {
		return nil, fmt.Errorf("size %dx%d outside 200x150..10000x10000", w, h)
	}
	xa, ya, err := c.axes()
	if err != nil {
		return nil, err
	}
	img := image.NewPaletted(image.Rect(0, 0, w, h), palette)
	plot := plotRect(w, h)
	// Lines are drawn with a 2x2 pen from its top-left pixel, hence the -2.
	xa.pix0, xa.pix1 = float64(plot.Min.X), float64(plot.Max.X-2)
	ya.pix0, ya.pix1 = float64(plot.Max.Y-2), float64(plot.Min.Y)

	// Axis lines sit just outside the plot area so series never paint over them.
	for x := plot.Min.X - 1; x < plot.Max.X; x++ {
		img.SetColorIndex(x, plot.Max.Y, black)
	}
	for y := plot.Min.Y; y <= plot.Max.Y; y++ {
		img.SetColorIndex(plot.Min.X-1, y, black)
	}
	th := 5 * textScale
	for _, v := range xa.ticks() {
		px, label := xa.pix(v), formatTick(v, xa.step)
		for d := 1; d <= 5; d++ {
			img.SetColorIndex(px, plot.Max.Y+d, black)
		}
		drawText(img, px-textWidth(label, textScale)/2, plot.Max.Y+9, textScale, label, black, false)
	}
	for _, v := range ya.ticks() {
		py, label := ya.pix(v), formatTick(v, ya.step)
		for d := 2; d <= 6; d++ {
			img.SetColorIndex(plot.Min.X-d, py, black)
		}
		drawText(img, plot.Min.X-10-textWidth(label, textScale), py-th/2, textScale, label, black, false)
	}
	drawText(img, (w-textWidth(c.Title, titleScale))/2, 10, titleScale, c.Title, black, false)
	drawText(img, plot.Min.X+(plot.Dx()-textWidth(c.XLabel, textScale))/2, h-th-6, textScale, c.XLabel, black, false)
	drawText(img, 6, plot.Min.Y+(plot.Dy()+textWidth(c.YLabel, textScale))/2, textScale, c.YLabel, black, true)

	// Reference lines first, so series are drawn over them.
	for _, hl := range c.HLines {
		if !finite(hl.Y) || hl.Y < ya.lo || hl.Y > ya.hi {
			continue
		}
		py := ya.pix(hl.Y)
		for px := plot.Min.X; px < plot.Max.X; px++ {
			if (px-plot.Min.X)%10 < 6 {
				img.SetColorIndex(px, py, grey)
			}
		}
		drawText(img, plot.Min.X+4, py-th-3, textScale, hl.Label, grey, false)
	}
	for i, s := range c.Series {
		idx := seriesColour(i)
		px, py, have := 0.0, 0.0, false
		for j, x := range s.X {
			y := s.Y[j]
			if !finite(y) {
				have = false
				continue
			}
			if !have { // the first point after a gap is drawn as a dot (a zero-length segment)
				px, py = x, y
			}
			segment(img, plot, xa, ya, px, py, x, y, idx)
			px, py, have = x, y, true
		}
	}
	c.drawLegend(img, plot)
	return img, nil
}

// segment clips (x0,y0)-(x1,y1) to the axis ranges in data space
// (Liang-Barsky) before converting to pixels, so far out-of-range values
// (fixed YMin/YMax) neither overflow int nor make Bresenham walk millions of pixels.
func segment(img *image.Paletted, plot image.Rectangle, xa, ya axis, x0, y0, x1, y1 float64, idx uint8) {
	t0, t1 := 0.0, 1.0
	dx, dy := x1-x0, y1-y0
	for _, e := range [4][2]float64{{-dx, x0 - xa.lo}, {dx, xa.hi - x0}, {-dy, y0 - ya.lo}, {dy, ya.hi - y0}} {
		p, q := e[0], e[1]
		switch t := q / p; {
		case p == 0 && q < 0: // parallel to this edge and outside it
			return
		case p < 0:
			t0 = math.Max(t0, t)
		case p > 0:
			t1 = math.Min(t1, t)
		}
	}
	if t0 > t1 {
		return
	}
	ax, ay, bx, by := x0+t0*dx, y0+t0*dy, x0+t1*dx, y0+t1*dy
	if !finite(ax) || !finite(ay) || !finite(bx) || !finite(by) {
		return // an overflowing dx or dy; nothing sensible to draw
	}
	line(img, plot, xa.pix(ax), ya.pix(ay), xa.pix(bx), ya.pix(by), idx)
}

// line draws a Bresenham line with a 2x2 pen, clipped to plot.
func line(img *image.Paletted, plot image.Rectangle, x0, y0, x1, y1 int, idx uint8) {
	dx, dy := max(x1-x0, x0-x1), -max(y1-y0, y0-y1)
	sx, sy := cmp.Compare(x1, x0), cmp.Compare(y1, y0)
	for e := dx + dy; ; {
		for _, p := range [4]image.Point{{x0, y0}, {x0 + 1, y0}, {x0, y0 + 1}, {x0 + 1, y0 + 1}} {
			if p.In(plot) {
				img.SetColorIndex(p.X, p.Y, idx)
			}
		}
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e, x0 = e+dy, x0+sx
		}
		if e2 <= dx {
			e, y0 = e+dx, y0+sy
		}
	}
}

// drawLegend boxes the named series with their colours in the plot's top-right corner.
func (c Chart) drawLegend(img *image.Paletted, plot image.Rectangle) {
	var named []int
	tw := 0
	for i, s := range c.Series {
		if s.Name != "" {
			named = append(named, i)
			tw = max(tw, textWidth(s.Name, textScale))
		}
	}
	if len(named) == 0 {
		return
	}
	rowH := 5*textScale + 6
	r := image.Rect(plot.Max.X-tw-44, plot.Min.Y+8, plot.Max.X-8, plot.Min.Y+14+len(named)*rowH)
	// A white fill inside a grey border, so lines passing under the box don't cross the names.
	draw.Draw(img, r, image.NewUniform(palette[grey]), image.Point{}, draw.Src)
	draw.Draw(img, r.Inset(1), image.NewUniform(palette[white]), image.Point{}, draw.Src)
	for k, i := range named {
		y := r.Min.Y + 6 + k*rowH
		for x := r.Min.X + 6; x < r.Min.X+26; x++ {
			img.SetColorIndex(x, y+4, seriesColour(i))
			img.SetColorIndex(x, y+5, seriesColour(i))
		}
		drawText(img, r.Min.X+32, y, textScale, c.Series[i].Name, black, false)
	}
}

// glyphs are 3x5 bitmaps, rows top to bottom, '1' = ink.
var glyphs = map[rune]string{
	'0': "111101101101111", '1': "010110010010111", '2': "111001111100111", '3': "111001111001111",
	'4': "101101111001001", '5': "111100111001111", '6': "111100111101111", '7': "111001001010010",
	'8': "111101111101111", '9': "111101111001111", '.': "000000000000010", '%': "101001010100101",
	'-': "000000111000000", ':': "000010000010000", ' ': "000000000000000", '/': "001001010100100",
	'(': "010100100100010", ')': "010001001001010", '_': "000000000000111", '?': "111001010000010",
	'A': "010101111101101", 'B': "110101110101110", 'C': "011100100100011", 'D': "110101101101110",
	'E': "111100110100111", 'F': "111100110100100", 'G': "011100101101011", 'H': "101101111101101",
	'I': "111010010010111", 'J': "001001001101010", 'K': "101101110101101", 'L': "100100100100111",
	'M': "101111111101101", 'N': "110101101101101", 'O': "010101101101010", 'P': "110101110100100",
	'Q': "010101101110011", 'R': "110101110101101", 'S': "011100010001110", 'T': "111010010010010",
	'U': "101101101101111", 'V': "101101101101010", 'W': "101101111111101", 'X': "101101010101101",
	'Y': "101101010010010", 'Z': "111001010100111",
}

// textWidth is the pixel width of s: 3-pixel glyphs with a 1-pixel gap, scaled.
func textWidth(s string, scale int) int {
	return (4*utf8.RuneCountInString(strings.ToUpper(s)) - 1) * scale
}

// drawText draws s with its top-left corner at (x, y); vertical text reads
// bottom to top with (x, y) its bottom-left corner. Pixels off the image are dropped.
func drawText(img *image.Paletted, x, y, scale int, s string, idx uint8, vertical bool) {
	for i, r := range []rune(strings.ToUpper(s)) {
		g, ok := glyphs[r]
		if !ok {
			g = glyphs['?']
		}
		for p := 0; p < 15; p++ {
			gx, gy := (i*4+p%3)*scale, (p/3)*scale
			for d := 0; g[p] == '1' && d < scale*scale; d++ {
				tx, ty := gx+d%scale, gy+d/scale
				if vertical {
					img.SetColorIndex(x+ty, y-tx, idx)
				} else {
					img.SetColorIndex(x+tx, y+ty, idx)
				}
			}
		}
	}
}
