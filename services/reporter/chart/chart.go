package chart

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Series is one line: points (X[i], Y[i]) drawn in order; a NaN or infinite
// Y breaks the line.
//
// Lo and Hi, when set (each as long as X), are a band around the line, for
// example the spread across seeds: filled in the series' colour, faint,
// under every line. A point whose Lo or Hi is not finite breaks the band.
//
// Marks draws a glyph at every point, for a series of a few measurements
// (a sweep's cells) that should not read as a sampled curve; a lone point
// between gaps is marked either way.
type Series struct {
	Name   string
	X, Y   []float64
	Lo, Hi []float64
	Marks  bool
}

// Chart describes one plot.
type Chart struct {
	Title, XLabel, YLabel string
	// YMin, YMax fix the y axis when YMax > YMin; otherwise it is fitted to
	// the data and the reference lines.
	YMin, YMax float64
	// HLines are horizontal reference lines (e.g. a target of 0.8), dashed,
	// named in the legend.
	HLines []HLine
	Series []Series
	// Width, Height are the image's size in pixels (default 900x500).
	Width, Height int
	// LegendLeft puts the legend in the top left corner (default: top
	// right, where a rising line ends).
	LegendLeft bool
}

// HLine is a horizontal reference line at Y, drawn dashed with its Label.
type HLine struct {
	Y     float64
	Label string
}

const (
	defaultWidth, defaultHeight = 900, 500
	dpi                         = 96
)

// Palette is the series colours in order (matplotlib's tab10 without its
// grey and olive, so no series looks like a reference line); they repeat
// after eight series.
var Palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

// referenceGrey is the colour of the reference lines.
var referenceGrey = color.RGBA{0x80, 0x80, 0x80, 0xff}

// PNG renders the chart.
func (c Chart) PNG() ([]byte, error) {
	data, err := c.render()
	if err != nil {
		return nil, fmt.Errorf("unable to render chart: %w", err)
	}
	return data, nil
}

func (c Chart) render() ([]byte, error) {
	w, h := c.size()
	if w <= 0 || h <= 0 || w > 10000 || h > 10000 {
		return nil, fmt.Errorf("invalid size %dx%d: want 1..10000 pixels each way", w, h)
	}
	yLo, yHi, err := c.validate()
	if err != nil {
		return nil, err
	}
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = c.Title, c.XLabel, c.YLabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = c.LegendLeft
	if fixed(c.YMin, c.YMax) {
		p.Y.Min, p.Y.Max = c.YMin, c.YMax
	} else {
		p.Y.Min, p.Y.Max = yLo, yHi
	}
	// Bands first, so that every line is drawn over them.
	for i, s := range c.Series {
		for _, poly := range bands(s) {
			pg, err := plotter.NewPolygon(poly)
			if err != nil {
				return nil, fmt.Errorf("series %q band: %w", s.Name, err)
			}
			col := Palette[i%len(Palette)]
			pg.Color = color.NRGBA{col.R, col.G, col.B, bandAlpha}
			pg.LineStyle.Width = 0
			p.Add(pg)
		}
	}
	for i, s := range c.Series {
		col := Palette[i%len(Palette)]
		for k, seg := range Segments(s) {
			l, err := plotter.NewLine(seg)
			if err != nil {
				return nil, fmt.Errorf("series %q: %w", s.Name, err)
			}
			l.Color, l.Width = col, vg.Points(1.5)
			p.Add(l)
			if k == 0 && s.Name != "" {
				p.Legend.Add(s.Name, l)
			}
			if len(seg) == 1 || s.Marks {
				// A lone point between gaps has no line: mark it (and
				// every point of a series with Marks).
				sc, err := plotter.NewScatter(seg)
				if err != nil {
					return nil, fmt.Errorf("series %q: %w", s.Name, err)
				}
				sc.Color, sc.Shape = col, draw.CircleGlyph{}
				p.Add(sc)
			}
		}
	}
	for _, hl := range c.HLines {
		if !finite(hl.Y) {
			continue
		}
		f := plotter.NewFunction(func(float64) float64 { return hl.Y })
		f.Color, f.Width, f.Dashes = referenceGrey, vg.Points(1), []vg.Length{vg.Points(6), vg.Points(4)}
		p.Add(f)
		if hl.Label != "" {
			p.Legend.Add(hl.Label, f)
		}
	}
	canvas := vgimg.NewWith(vgimg.UseWH(vg.Length(w)*vg.Inch/dpi, vg.Length(h)*vg.Inch/dpi), vgimg.UseDPI(dpi))
	p.Draw(draw.New(canvas))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: canvas}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("unable to encode png: %w", err)
	}
	return buf.Bytes(), nil
}

// size is the image size, with the defaults applied.
func (c Chart) size() (int, int) {
	w, h := c.Width, c.Height
	if w == 0 {
		w = defaultWidth
	}
	if h == 0 {
		h = defaultHeight
	}
	return w, h
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func fixed(lo, hi float64) bool { return finite(lo) && finite(hi) && hi > lo }

// validate checks the data and returns the y range the data and the
// reference lines span (widened when it is a single value).
func (c Chart) validate() (yLo, yHi float64, err error) {
	xLo, xHi := math.Inf(1), math.Inf(-1)
	yLo, yHi = xLo, xHi
	n := 0
	for _, s := range c.Series {
		if len(s.X) != len(s.Y) {
			return 0, 0, fmt.Errorf("series %q has %d x values but %d y values", s.Name, len(s.X), len(s.Y))
		}
		if (s.Lo != nil || s.Hi != nil) && (len(s.Lo) != len(s.X) || len(s.Hi) != len(s.X)) {
			return 0, 0, fmt.Errorf("series %q has %d x values but a band of %d low and %d high", s.Name, len(s.X), len(s.Lo), len(s.Hi))
		}
		for i, x := range s.X {
			if !finite(x) {
				return 0, 0, fmt.Errorf("series %q: x[%d] = %v is not finite", s.Name, i, x)
			}
			xLo, xHi = math.Min(xLo, x), math.Max(xHi, x)
			if y := s.Y[i]; finite(y) {
				yLo, yHi = math.Min(yLo, y), math.Max(yHi, y)
				n++
			}
			// A band is in view too: an interval cut off at the axis
			// would read as narrower than it is.
			if s.Lo != nil && finite(s.Lo[i]) && finite(s.Hi[i]) {
				yLo, yHi = math.Min(yLo, s.Lo[i]), math.Max(yHi, s.Hi[i])
			}
		}
	}
	if n == 0 {
		return 0, 0, errors.New("no points with finite y to plot")
	}
	for _, hl := range c.HLines {
		if finite(hl.Y) {
			yLo, yHi = math.Min(yLo, hl.Y), math.Max(yHi, hl.Y)
		}
	}
	if !finite(xHi-xLo) || !finite(yHi-yLo) {
		return 0, 0, errors.New("data range too large to plot")
	}
	if yHi == yLo {
		yLo, yHi = yLo-1, yHi+1
	}
	return yLo, yHi, nil
}

// Segments splits a series at its NaN and infinite Y values into the runs
// of points drawn as one line each.
func Segments(s Series) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range min(len(s.X), len(s.Y)) {
		if !finite(s.Y[i]) {
			if len(cur) > 0 {
				out, cur = append(out, cur), nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: s.X[i], Y: s.Y[i]})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// bandAlpha is a band's opacity: faint enough that two overlapping bands
// and the lines over them stay readable.
const bandAlpha = 0x40

// bands returns a series' band as closed polygons (the upper edge left to
// right, then the lower one back), one per run of points with finite Lo
// and Hi; a lone point has no area and is left out.
func bands(s Series) []plotter.XYs {
	n := len(s.X)
	if len(s.Lo) != n || len(s.Hi) != n {
		return nil
	}
	var out []plotter.XYs
	start := -1
	flush := func(end int) {
		if start >= 0 && end-start >= 2 {
			poly := make(plotter.XYs, 0, 2*(end-start))
			for i := start; i < end; i++ {
				poly = append(poly, plotter.XY{X: s.X[i], Y: s.Hi[i]})
			}
			for i := end - 1; i >= start; i-- {
				poly = append(poly, plotter.XY{X: s.X[i], Y: s.Lo[i]})
			}
			out = append(out, poly)
		}
		start = -1
	}
	for i := range n {
		if finite(s.Lo[i]) && finite(s.Hi[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(n)
	return out
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
