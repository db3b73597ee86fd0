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

// isColour reports whether the pixel at (x, y) is exactly palette entry idx.
func isColour(img image.Image, x, y int, idx uint8) bool {
	return color.RGBAModel.Convert(img.At(x, y)) == palette[idx]
}

// at maps fractions of the plot area (0,0 = bottom-left) to the pixel where
// the 2x2 pen's top-left lands, computed here independently of axis.pix.
func at(w, h int, fx, fy float64) (int, int) {
	r := plotRect(w, h)
	return r.Min.X + int(math.Round(fx*float64(r.Dx()-2))), r.Max.Y - 2 - int(math.Round(fy*float64(r.Dy()-2)))
}

func TestSize(t *testing.T) {
	pts := []Series{{X: []float64{0, 1}, Y: []float64{0, 1}}}
	for _, tc := range []struct{ w, h, wantW, wantH int }{{0, 0, 900, 500}, {640, 360, 640, 360}} {
		if b := decode(t, Chart{Series: pts, Width: tc.w, Height: tc.h}).Bounds(); b != image.Rect(0, 0, tc.wantW, tc.wantH) {
			t.Errorf("size for %dx%d = %v, want %dx%d", tc.w, tc.h, b, tc.wantW, tc.wantH)
		}
	}
}

func TestSeriesPixelsAndBackground(t *testing.T) {
	c := Chart{
		Title: "Success rate", XLabel: "step", YLabel: "rate", YMin: 0, YMax: 1,
		HLines: []HLine{{Y: 0.8, Label: "target"}},
		Series: []Series{
			{Name: "mid", X: []float64{0, 10}, Y: []float64{0.5, 0.5}},
			{Name: "low", X: []float64{0, 5, 10}, Y: []float64{0.25, 0.25, 0.25}},
		},
	}
	img := decode(t, c)
	w, h := c.size()
	for _, tc := range []struct {
		y   float64
		idx uint8
	}{{0.5, firstSeries}, {0.25, firstSeries + 1}} { // literal indices: the two series must differ
		x, y := at(w, h, 0.5, tc.y)
		if !isColour(img, x, y, tc.idx) || !isColour(img, x, y+1, tc.idx) {
			t.Errorf("pixel (%d,%d) for y=%v is %v, want series colour %v", x, y, tc.y, img.At(x, y), palette[tc.idx])
		}
	}
	if x, y := at(w, h, 0.3, 0.65); !isColour(img, x, y, white) {
		t.Errorf("pixel (%d,%d) far from every line is %v, want white", x, y, img.At(x, y))
	}
	// The dashed reference line: grey on a dash, white in the gap after it.
	x, y := at(w, h, 0, 0.8)
	if !isColour(img, x+2, y, grey) || !isColour(img, x+8, y, white) {
		t.Errorf("hline at row %d: want grey at x=%d and white at x=%d", y, x+2, x+8)
	}
}

func TestNaNBreaksLine(t *testing.T) {
	c := Chart{YMin: 0, YMax: 1, Series: []Series{
		{Name: "gappy", X: []float64{0, 1, 2, 3, 4}, Y: []float64{0.5, 0.5, math.NaN(), 0.5, 0.5}},
	}}
	img := decode(t, c)
	w, h := c.size()
	for _, fx := range []float64{0.125, 0.875} { // inside both drawn segments
		if x, y := at(w, h, fx, 0.5); !isColour(img, x, y, seriesColour(0)) {
			t.Errorf("pixel at x fraction %v is %v, want the series colour", fx, img.At(x, y))
		}
	}
	if x, y := at(w, h, 0.5, 0.5); isColour(img, x, y, seriesColour(0)) {
		t.Errorf("pixel (%d,%d) in the NaN gap is the series colour", x, y)
	}
}

func TestOutOfRangeIsClipped(t *testing.T) {
	c := Chart{YMin: 0, YMax: 1, Series: []Series{{X: []float64{0, 1}, Y: []float64{0.5, 1e300}}}}
	img := decode(t, c)
	r := plotRect(c.size())
	for x := 0; x < r.Max.X+r.Min.X; x++ {
		if isColour(img, x, r.Min.Y-1, seriesColour(0)) {
			t.Fatalf("series drawn above the plot area at x=%d", x)
		}
	}
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
	} {
		if data, err := c.PNG(); err == nil || data != nil {
			t.Errorf("%s: PNG() = %d bytes, %v; want an error", name, len(data), err)
		} else if !strings.HasPrefix(err.Error(), "unable to render chart: ") {
			t.Errorf("%s: error %q not wrapped", name, err)
		}
	}
}

func TestFormatTick(t *testing.T) {
	for _, tc := range []struct {
		v, step float64
		want    string
	}{{0, 0.2, "0"}, {3 * 0.2, 0.2, "0.6"}, {-0.0, 1, "0"}, {1500, 500, "1.5k"}, {1000, 200, "1k"},
		{2e6, 1e6, "2M"}, {0.05, 0.05, "0.05"}, {-2000, 1000, "-2k"}, {25, 5, "25"}} {
		if got := formatTick(tc.v, tc.step); got != tc.want {
			t.Errorf("formatTick(%v, %v) = %q, want %q", tc.v, tc.step, got, tc.want)
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
