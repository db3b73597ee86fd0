package chart

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func decode(t *testing.T, c Chart) image.Image {
	t.Helper()
	data, err := c.PNG()
	if err != nil {
		t.Fatalf("PNG: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return img
}

// pixels returns where img is exactly colour c (a line's core; its
// antialiased edges blend into the background).
func pixels(img image.Image, c color.RGBA) []image.Point {
	var out []image.Point
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)) == c {
				out = append(out, image.Pt(x, y))
			}
		}
	}
	return out
}

// pixelsNear returns where img is c within 1 per channel (a blend's
// rounding).
func pixelsNear(img image.Image, c color.RGBA) []image.Point {
	near := func(a, b uint8) bool { return a == b || a+1 == b || a == b+1 }
	var out []image.Point
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			p := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if near(p.R, c.R) && near(p.G, c.G) && near(p.B, c.B) {
				out = append(out, image.Pt(x, y))
			}
		}
	}
	return out
}

func TestSize(t *testing.T) {
	pts := []Series{{X: []float64{0, 1}, Y: []float64{0, 1}}}
	for _, tc := range []struct{ w, h, wantW, wantH int }{{0, 0, 900, 500}, {640, 360, 640, 360}} {
		if b := decode(t, Chart{Series: pts, Width: tc.w, Height: tc.h}).Bounds(); b.Dx() != tc.wantW || b.Dy() != tc.wantH {
			t.Errorf("size for %dx%d = %v, want %dx%d", tc.w, tc.h, b, tc.wantW, tc.wantH)
		}
	}
}

// Each series is drawn in its colour where its data are: a constant 0.25 on
// a fixed 0..1 axis in the lower half, 0.75 in the upper half; no colour
// of a series that does not exist appears.
func TestSeriesDrawnWhereTheirDataAre(t *testing.T) {
	c := Chart{
		Title: "success", XLabel: "minutes", YLabel: "rate", YMin: 0, YMax: 1,
		HLines: []HLine{{Y: 0.8, Label: "target"}},
		Series: []Series{
			{Name: "high", X: []float64{0, 10}, Y: []float64{0.75, 0.75}},
			{Name: "low", X: []float64{0, 5, 10}, Y: []float64{0.25, 0.25, 0.25}},
		},
	}
	img := decode(t, c)
	h := img.Bounds().Dy()
	high, low := pixels(img, Palette[0]), pixels(img, Palette[1])
	if len(high) < 100 || len(low) < 100 {
		t.Fatalf("%d and %d pixels of the two series' colours, want a line of each", len(high), len(low))
	}
	// The legend's samples are drawn in the colours too: most pixels are
	// the lines'.
	share := func(ps []image.Point, upper bool) float64 {
		n := 0
		for _, p := range ps {
			if (p.Y < h/2) == upper {
				n++
			}
		}
		return float64(n) / float64(len(ps))
	}
	if s := share(high, true); s < 0.9 {
		t.Errorf("%.0f%% of the 0.75 series is in the upper half, want nearly all", 100*s)
	}
	if s := share(low, false); s < 0.8 {
		t.Errorf("%.0f%% of the 0.25 series is in the lower half, want most (the legend sits on top)", 100*s)
	}
	if n := len(pixels(img, Palette[2])); n != 0 {
		t.Errorf("%d pixels of a third series' colour, with two series", n)
	}
}

// A band is filled, faintly, in its series' colour between Lo and Hi: on
// a fixed 0..1 axis, a band from 0.1 to 0.4 lies in the lower half, and
// a gap (NaN) splits it.
func TestBand(t *testing.T) {
	nan := math.NaN()
	s := Series{Name: "median", X: []float64{0, 1, 2, 3, 4, 5}, Y: []float64{0.25, 0.25, 0.25, 0.25, 0.25, 0.25},
		Lo: []float64{0.1, 0.1, 0.1, nan, 0.1, 0.1}, Hi: []float64{0.4, 0.4, 0.4, nan, 0.4, 0.4}}
	if got := bands(s); len(got) != 2 || len(got[0]) != 6 || len(got[1]) != 4 {
		t.Fatalf("bands %v, want polygons of 6 and 4 points", got)
	}
	img := decode(t, Chart{YMin: 0, YMax: 1, Series: []Series{s}})
	// The fill: Palette[0] at bandAlpha over white.
	c := Palette[0]
	blend := func(v uint8) uint8 { return uint8((int(v)*bandAlpha + 255*(255-bandAlpha) + 127) / 255) }
	want := color.RGBA{blend(c.R), blend(c.G), blend(c.B), 0xff}
	fill := pixelsNear(img, want)
	near := 0
	for _, p := range fill {
		if p.Y > img.Bounds().Dy()/2 {
			near++
		}
	}
	if len(fill) < 1000 || float64(near) < 0.95*float64(len(fill)) {
		t.Errorf("%d band pixels, %d in the lower half; want a filled band there", len(fill), near)
	}
	// Without Lo and Hi nothing is filled.
	s.Lo, s.Hi = nil, nil
	if n := len(pixelsNear(decode(t, Chart{YMin: 0, YMax: 1, Series: []Series{s}}), want)); n > 50 {
		t.Errorf("%d band-coloured pixels without a band", n)
	}
}

func TestSegments(t *testing.T) {
	s := Series{X: []float64{0, 1, 2, 3, 4, 5}, Y: []float64{1, math.NaN(), 2, 3, math.Inf(1), 4}}
	segs := Segments(s)
	if len(segs) != 3 || len(segs[0]) != 1 || len(segs[1]) != 2 || len(segs[2]) != 1 || segs[1][1].Y != 3 {
		t.Fatalf("segments %v, want [1] [2 3] [4]", segs)
	}
	if segs := Segments(Series{X: []float64{1}, Y: []float64{math.NaN()}}); len(segs) != 0 {
		t.Fatalf("all-NaN series: %v", segs)
	}
	// Gaps and out-of-range values render (clipped), never panic.
	decode(t, Chart{YMin: 0, YMax: 1, Series: []Series{s, {X: []float64{0, 1}, Y: []float64{-1e300, 1e300}}}})
}

func TestErrors(t *testing.T) {
	for name, c := range map[string]Chart{
		"no series":  {},
		"no points":  {Series: []Series{{Name: "a"}}},
		"all NaN y":  {Series: []Series{{X: []float64{1}, Y: []float64{math.NaN()}}}},
		"mismatched": {Series: []Series{{X: []float64{1, 2}, Y: []float64{1}}}},
		"NaN x":      {Series: []Series{{X: []float64{1, math.NaN()}, Y: []float64{1, 2}}}},
		"Inf x":      {Series: []Series{{X: []float64{math.Inf(1)}, Y: []float64{1}}}},
		"huge range": {Series: []Series{{X: []float64{-1e308, 1e308}, Y: []float64{1, 2}}}},
		"bad size":   {Width: -5, Series: []Series{{X: []float64{1}, Y: []float64{1}}}},
		"short band": {Series: []Series{{X: []float64{1, 2}, Y: []float64{1, 2}, Lo: []float64{1}, Hi: []float64{1, 2}}}},
	} {
		if data, err := c.PNG(); err == nil || data != nil {
			t.Errorf("%s: PNG() = %d bytes, %v; want an error", name, len(data), err)
		} else if !strings.HasPrefix(err.Error(), "unable to render chart: ") {
			t.Errorf("%s: error %q not wrapped", name, err)
		}
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.png")
	c := Chart{Series: []Series{{Name: "a", X: []float64{1, 2, 3}, Y: []float64{3, 1, 2}}}, Width: 300, Height: 200}
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if cfg, err := png.DecodeConfig(f); err != nil || cfg.Width != 300 || cfg.Height != 200 {
		t.Errorf("written file: %+v, %v; want a 300x200 PNG", cfg, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("dir has %d entries, want only the chart (no temp file left)", len(entries))
	}
	if err := (Chart{}).WriteFile(path); err == nil {
		t.Error("WriteFile of an empty chart succeeded")
	}
}

// Marks draws a glyph at every point: more of the series' colour than its
// line alone. A band widens the fitted y axis, so that an interval is not
// cut off at the axis.
func TestMarksAndBandInView(t *testing.T) {
	s := Series{Name: "ratio", X: []float64{0.1, 0.5, 0.8}, Y: []float64{1.5, 2, 4}}
	plain := len(pixels(decode(t, Chart{YMin: 0, YMax: 5, Series: []Series{s}}), Palette[0]))
	s.Marks = true
	marked := len(pixels(decode(t, Chart{YMin: 0, YMax: 5, Series: []Series{s}}), Palette[0]))
	if marked <= plain+30 {
		t.Errorf("%d pixels of the series' colour with marks, %d without: want three glyphs more", marked, plain)
	}
	s.Lo, s.Hi = []float64{1, 1.2, 3}, []float64{2, 3, 6.5}
	if lo, hi, err := (Chart{Series: []Series{s}}).validate(); err != nil || lo != 1 || hi != 6.5 {
		t.Errorf("fitted y range [%v, %v] (%v), want the band's [1, 6.5]", lo, hi, err)
	}
}
