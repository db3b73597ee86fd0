package oracle

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/image/colornames"

	"github.com/asyncwebrl/asyncwebrl/services/internal/frame"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// mouseSolvers: tasks of the mouse's own actions: points, drags, hovers, angles, colour wheels.
var mouseSolvers = map[string]MiniWoBSolver{
	"draw-line":         mouseDrawLine,
	"drag-circle":       mouseDragDirection,
	"drag-single-shape": mouseDragDirection,
	"drag-shapes":       mouseDragShapes,
	"drag-shapes-2":     mouseDragShapes2,
	"drag-items":        mouseDragItems,
	"drag-items-grid":   mouseDragItemsGrid,
	"drag-sort-numbers": mouseDragSortNumbers,
	"resize-textarea":   mouseResizeTextarea,
	"drag-cube":         mouseDragCube,
	"use-colorwheel":    mouseColorwheel,
	"use-colorwheel-2":  mouseColorwheel2,
	"use-slider":        mouseUseSlider,
	"use-slider-2":      mouseUseSlider2,
	"daily-calendar":    mouseDailyCalendar,
	"hot-cold":          mouseHotCold,
	// These score the distance or angle off (1 only when exactly 0, which
	// the policy's 2.5x3.3 px points never are): their solvers click the
	// point the page scores best (catalog.MiniWoBGraded).
	"circle-center": mouseCircleCenter,
	"find-midpoint": mouseFindMidpoint,
	"bisect-angle":  mouseBisectAngle,
	"right-angle":   mouseRightAngle,
	// Not here: hover-shape's page never ends an episode but by its time
	// limit (-1).
}

// mouseGrid is the policy's point grid: 64x64 positions over the viewport.
const mouseGrid = 64

// mouseSnap returns the centre of the policy's point position that holds
// (x, y): where the policy's version of a point step acts. Solvers aim
// there themselves, so that a test plays what the audit replays.
func mouseSnap(p *Play, x, y float64) (float64, float64) {
	w, h := float64(p.Obs.Viewport.W), float64(p.Obs.Viewport.H)
	cell := func(v, size float64) float64 {
		i := math.Floor(v * mouseGrid / size)
		i = math.Max(0, math.Min(mouseGrid-1, i))
		return (i + 0.5) * size / mouseGrid
	}
	return cell(x, w), cell(y, h)
}

// mouseGridPoints lists the policy's point positions inside the rectangle
// [x0, x1) x [y0, y1).
func mouseGridPoints(p *Play, x0, y0, x1, y1 float64) [][2]float64 {
	w, h := float64(p.Obs.Viewport.W), float64(p.Obs.Viewport.H)
	var out [][2]float64
	for j := 0; j < mouseGrid; j++ {
		y := (float64(j) + 0.5) * h / mouseGrid
		if y < y0 || y >= y1 {
			continue
		}
		for i := 0; i < mouseGrid; i++ {
			x := (float64(i) + 0.5) * w / mouseGrid
			if x >= x0 && x < x1 {
				out = append(out, [2]float64{x, y})
			}
		}
	}
	return out
}

// mouseGridLine lists the places of the policy's point positions along an
// axis (y when vertical) within [lo, hi).
func mouseGridLine(p *Play, vertical bool, lo, hi float64) []float64 {
	size := float64(p.Obs.Viewport.W)
	if vertical {
		size = float64(p.Obs.Viewport.H)
	}
	var out []float64
	for i := 0; i < mouseGrid; i++ {
		if c := (float64(i) + 0.5) * size / mouseGrid; c >= lo && c < hi {
			out = append(out, c)
		}
	}
	return out
}

// mouseMoveTo and mouseDrag act at the policy's points.
func mouseMoveTo(ctx context.Context, p *Play, x, y float64) error {
	x, y = mouseSnap(p, x, y)
	return p.Do(ctx, env.Action{Type: env.MouseMove, X: x, Y: y})
}

func mouseDrag(ctx context.Context, p *Play, x0, y0, x1, y1 float64) error {
	x0, y0 = mouseSnap(p, x0, y0)
	x1, y1 = mouseSnap(p, x1, y1)
	return p.Do(ctx, env.Action{Type: env.MouseDragAndDrop, X: x0, Y: y0, ToX: x1, ToY: y1})
}

// mouseWait is a noop of the policy's length (its noop waits a second).
func mouseWait(ctx context.Context, p *Play) error {
	return p.Do(ctx, env.Action{Type: env.Noop, WaitMS: 1000})
}

// mouseRect is an element's client rectangle.
type mouseRect struct{ Left, Top, Width, Height float64 }

func (r mouseRect) cx() float64 { return r.Left + r.Width/2 }
func (r mouseRect) cy() float64 { return r.Top + r.Height/2 }

// mouseRectJS is a JS function turning an element into its mouseRect.
const mouseRectJS = `(e => { const r = e.getBoundingClientRect(); return {left: r.left, top: r.top, width: r.width, height: r.height}; })`

// mouseDrawLine draws the asked line through the dot: 9 points (the press
// and the drag's 8 moves) 5.5 px apart along it, the middle one on the
// mark. The page scores the spread of the last point from the mean (its
// own formula): 44 px make it 7 px along the line and 0 across.
func mouseDrawLine(ctx context.Context, p *Play) error {
	horizontal := strings.Contains(p.Obs.Instruction, "horizontal")
	if !horizontal && !strings.Contains(p.Obs.Instruction, "vertical") {
		return fmt.Errorf("no direction in %q", p.Obs.Instruction)
	}
	var c mouseRect
	if err := p.Read(ctx, mouseRectJS+`(document.querySelector('#circ'))`, &c); err != nil {
		return err
	}
	// The page's mark is 4 px up and left of the dot's centre.
	mx, my := c.cx()-4, c.cy()-4
	const half = 22
	var err error
	if horizontal {
		err = mouseDrag(ctx, p, mx-half, my, mx+half, my)
	} else {
		err = mouseDrag(ctx, p, mx, my-half, mx, my+half)
	}
	if err != nil {
		return err
	}
	return p.By(ctx, "#controls button", click)
}

// mouseDirs are the instructions' directions as unit steps.
var mouseDirs = map[string][2]float64{"left": {-1, 0}, "right": {1, 0}, "up": {0, -1}, "down": {0, 1}}

// mouseShapePoint is JS returning a point inside an SVG shape e: its
// centre, or for a triangle a point low in it, where it is wide.
const mouseShapePoint = `(e => { const r = e.getBoundingClientRect();
	return {x: r.left + r.width / 2, y: r.top + r.height * (e.tagName === 'polygon' ? 0.65 : 0.5)}; })`

// mouseDragDirection drags drag-circle's circle or drag-single-shape's
// shape 30 px the asked way and submits.
func mouseDragDirection(ctx context.Context, p *Play) error {
	dir, err := p.Between("Drag the ", " then press Submit.")
	if err != nil {
		return err
	}
	f := strings.Fields(dir)
	d, ok := mouseDirs[f[len(f)-1]]
	if !ok {
		return fmt.Errorf("unknown direction %q", dir)
	}
	var pt struct{ X, Y float64 }
	if err := p.Read(ctx, mouseShapePoint+`(document.querySelector('#area svg circle, #area svg rect, #area svg polygon'))`, &pt); err != nil {
		return err
	}
	return steps(func() error { return mouseDrag(ctx, p, pt.X, pt.Y, pt.X+30*d[0], pt.Y+30*d[1]) },
		func() error { return p.By(ctx, submit, click) })
}

// mouseShape is one of drag-shapes' shapes as the page shows it.
type mouseShape struct {
	Tag, Fill string
	// X, Y: a point inside it; W its width.
	X, Y, W float64
}

// mouseShapesJS lists the draggable shapes (not the boxes), with the SVG's
// origin in the viewport.
const mouseShapesJS = `(() => {
	const svg = document.querySelector('#area_svg').getBoundingClientRect();
	const pt = ` + mouseShapePoint + `;
	const shapes = [...document.querySelectorAll('#area_svg rect:not(#shape-container), #area_svg circle, #area_svg polygon')].map(e => {
		const p = pt(e); return {tag: e.tagName, fill: e.getAttribute('fill'), x: p.x, y: p.y, w: e.getBoundingClientRect().width}; });
	return {left: svg.left, top: svg.top, shapes};
})()`

// mouseDropShape drags shape s so that the corner the page scores (its
// box's top left) lands at (tx, ty) of the SVG: the page puts that corner
// k·width up and left of the pointer (k by shape, its drag handler's).
func mouseDropShape(ctx context.Context, p *Play, left, top float64, s mouseShape, tx, ty float64) error {
	k := map[string]float64{"rect": 0.5, "circle": 0.6, "polygon": 0.4}[s.Tag]
	return mouseDrag(ctx, p, s.X, s.Y, left+tx+k*s.W, top+ty+k*s.W)
}

// mouseDragShapes drags every shape of the asked kind into the box, side
// by side, and submits.
func mouseDragShapes(ctx context.Context, p *Play) error {
	kind, err := p.Between("Drag all ", " into the black box.")
	if err != nil {
		return err
	}
	tag, ok := map[string]string{"rectangles": "rect", "circles": "circle", "triangles": "polygon"}[kind]
	if !ok {
		return fmt.Errorf("unknown shapes %q", kind)
	}
	var box struct{ X, Y float64 }
	if err := p.Read(ctx, `(() => { const b = document.querySelector('#shape-container'); return {x: +b.getAttribute('x'), y: +b.getAttribute('y')}; })()`, &box); err != nil {
		return err
	}
	var page struct {
		Left, Top float64
		Shapes    []mouseShape
	}
	if err := p.Read(ctx, mouseShapesJS, &page); err != nil {
		return err
	}
	n := 0
	for _, s := range page.Shapes {
		if s.Tag != tag {
			continue
		}
		// The box is 80x45: corners 10..50 across, 8..26 down.
		if err := mouseDropShape(ctx, p, page.Left, page.Top, s, box.X+10+20*float64(n%3), box.Y+8+18*float64(n/3%2)); err != nil {
			return err
		}
		n++
	}
	return p.By(ctx, submit, click)
}

// mouseDragShapes2 drags the asked shapes (a kind, or a colour) into the
// left box and the others into the right one, and submits.
func mouseDragShapes2(ctx context.Context, p *Play) error {
	what, err := p.Between("Drag all ", " into the left box")
	if err != nil {
		return err
	}
	tag, byKind := map[string]string{"rectangles": "rect", "circles": "circle", "triangles": "polygon"}[what]
	colour := strings.TrimSuffix(what, " shapes")
	if !byKind && colour == what {
		return fmt.Errorf("unknown shapes %q", what)
	}
	var page struct {
		Left, Top float64
		Shapes    []mouseShape
	}
	if err := p.Read(ctx, mouseShapesJS, &page); err != nil {
		return err
	}
	// The boxes are 70x50 at (2, 5) and (84, 5) of the SVG.
	var nLeft, nRight int
	for _, s := range page.Shapes {
		left := s.Fill == colour
		if byKind {
			left = s.Tag == tag
		}
		bx, n := 84.0, &nRight
		if left {
			bx, n = 2, &nLeft
		}
		if err := mouseDropShape(ctx, p, page.Left, page.Top, s, bx+6+20*float64(*n%3), 5+6+22*float64(*n/3%2)); err != nil {
			return err
		}
		*n++
	}
	return p.By(ctx, submit, click)
}

// mouseResizeTextarea drags the textarea's corner handle 25 px the asked
// way along the asked dimension and submits.
func mouseResizeTextarea(ctx context.Context, p *Play) error {
	q := p.Obs.Instruction
	d := 25.0
	if strings.Contains(q, "smaller") {
		d = -d
	}
	var dx, dy float64
	switch {
	case strings.Contains(q, "width"):
		dx = d
	case strings.Contains(q, "height"):
		dy = d
	default:
		return fmt.Errorf("no dimension in %q", q)
	}
	var h mouseRect
	if err := p.Read(ctx, mouseRectJS+`(document.querySelector('.ui-resizable-se'))`, &h); err != nil {
		return err
	}
	return steps(func() error { return mouseDrag(ctx, p, h.cx(), h.cy(), h.cx()+dx, h.cy()+dy) },
		func() error { return p.By(ctx, "#submit", click) })
}

// mouseColorwheel types the asked colour's hex code into the picker's
// field: the score wants the exact colour, which the wheel's pad reaches
// only for a few.
func mouseColorwheel(ctx context.Context, p *Play) error {
	name, err := p.Between("Select ", " with the color picker")
	if err != nil {
		return err
	}
	// use-colorwheel's colours (its ui_utils table) are CSS names.
	c, ok := colornames.Map[name]
	if !ok {
		return fmt.Errorf("unknown colour %q", name)
	}
	return mouseSetColour(ctx, p, fmt.Sprintf("%02x%02x%02x", c.R, c.G, c.B))
}

// mouseColorwheel2 sets the swatch's colour, as a person sees it, with
// the picker's pad and slider: no text on the page names it. jscolor
// (HSV mode) takes hue from the pad's x, saturation from its y and value
// from the slider's y, each from the pointer's whole pixel within the
// pad's inner box; the solver clicks the pad point and the slider point of
// the policy's grid whose colour the page scores best (1 − the mean
// channel difference), so it scores just under 1, as a person's clicks do
// (catalog.MiniWoBGraded).
func mouseColorwheel2(ctx context.Context, p *Play) error {
	var rgb string
	if err := p.Read(ctx, `getComputedStyle(document.querySelector('#query .cc')).backgroundColor`, &rgb); err != nil {
		return err
	}
	var want [3]float64
	if _, err := fmt.Sscanf(rgb, "rgb(%g, %g, %g)", &want[0], &want[1], &want[2]); err != nil {
		return fmt.Errorf("unable to read the colour %q: %w", rgb, err)
	}
	if err := p.By(ctx, "#col", click); err != nil {
		return err
	}
	// The pad's and slider's mouse areas (crosshair, and the box right of
	// it) hold their boxes at padding + inset from their corners.
	var g struct {
		Pad, Sld        mouseRect
		W, H, Pad0, Ins float64
		SX, SY          float64
	}
	if err := p.Read(ctx, `(() => { const j = document.getElementById('col').jscolor; const r = `+mouseRectJS+`;
		const ds = [...document.querySelectorAll('body div')].filter(d => !d.closest('#wrap'));
		const pad = ds.find(d => getComputedStyle(d).cursor === 'crosshair');
		if (!j || !pad) return null;
		const pr = pad.getBoundingClientRect();
		const sld = ds.find(d => { const b = d.getBoundingClientRect(); return b.left >= pr.right - 1 && b.top === pr.top && b.height === pr.height; });
		if (!sld) return null;
		return {pad: r(pad), sld: r(sld), w: j.width, h: j.height, pad0: j.padding, ins: j.insetWidth, sx: scrollX, sy: scrollY}; })()`, &g); err != nil {
		return err
	}
	if g.W < 2 || g.H < 2 {
		return errors.New("the colour picker did not open")
	}
	off := g.Pad0 + g.Ins
	// at is a grid point's place in a box whose inner corner is (x0, y0),
	// as the page reads it.
	at := func(pt [2]float64, x0, y0 float64) (float64, float64) {
		return math.Floor(pt[0]+g.SX) - x0, math.Floor(pt[1]+g.SY) - y0
	}
	clamp := func(v, hi float64) float64 { return math.Max(0, math.Min(hi, v)) }
	padX, padY := g.Pad.Left+g.SX+off, g.Pad.Top+g.SY+off
	sldY := g.Sld.Top + g.SY + off
	pads, err := mouseGradedGrid(p, padX, padY, padX+g.W, padY+g.H)
	if err != nil {
		return err
	}
	slds, err := mouseGradedGrid(p, g.Sld.Left+g.SX+off, sldY, g.Sld.Left+g.Sld.Width-off, sldY+g.H)
	if err != nil {
		return err
	}
	best, bestScore := [2][2]float64{}, -1.0
	for _, pp := range pads {
		x, y := at(pp, padX, padY)
		h, s := clamp(x*360/(g.W-1), 360), clamp(100-y*100/(g.H-1), 100)
		for _, sp := range slds {
			_, vy := at(sp, 0, sldY)
			v := clamp(100-vy*100/(g.H-1), 100)
			c := hsvRGB(h, s, v)
			score := 1 - (math.Abs(c[0]-want[0])+math.Abs(c[1]-want[1])+math.Abs(c[2]-want[2]))/(3*255)
			if score > bestScore {
				best, bestScore = [2][2]float64{pp, sp}, score
			}
		}
	}
	if bestScore < 0 {
		return errors.New("no point of the grid on the picker")
	}
	return steps(func() error { return p.Do(ctx, env.Action{Type: env.MouseClick, X: best[0][0], Y: best[0][1]}) },
		func() error { return p.Do(ctx, env.Action{Type: env.MouseClick, X: best[1][0], Y: best[1][1]}) },
		func() error { return p.By(ctx, submit, click) })
}

// hsvRGB is jscolor's HSV to RGB: hue in [0, 360], saturation and value
// in [0, 100], channels rounded to whole values in [0, 255].
func hsvRGB(h, s, v float64) [3]float64 {
	h, s, v = h/60, s/100, v/100
	i := math.Floor(h)
	f := h - i
	if int(i)%2 == 0 {
		f = 1 - f
	}
	m, n := v*(1-s), v*(1-s*f)
	var c [3]float64
	switch int(i) {
	case 6, 0:
		c = [3]float64{v, n, m}
	case 1:
		c = [3]float64{n, v, m}
	case 2:
		c = [3]float64{m, v, n}
	case 3:
		c = [3]float64{m, n, v}
	case 4:
		c = [3]float64{n, m, v}
	case 5:
		c = [3]float64{v, m, n}
	}
	for k := range c {
		c[k] = math.Round(c[k] * 255)
	}
	return c
}

// mouseSetColour fills the colour field and submits (a press anywhere
// closes the picker, if the field opened it).
func mouseSetColour(ctx context.Context, p *Play, hex string) error {
	return steps(func() error { return p.By(ctx, "#col", fill(hex)) },
		func() error { return p.By(ctx, submit, click) })
}

var mouseNumRe = regexp.MustCompile(`-?\d+`)

// mouseSliderSet sets a jQuery UI slider to want by clicking its track,
// reading the value it shows (valJS) after each click: the first click,
// far from the handle, gives the scale (the handle's centre is the value
// shown); later ones aim by it. When no point of the policy's grid gives
// the value (a wide range on a short track), the handle's arrow keys
// finish.
func mouseSliderSet(ctx context.Context, p *Play, sliderJS, valJS string, want int) error {
	type geo struct {
		Track    mouseRect
		Handle   mouseRect
		Vertical bool
		Val      string
	}
	read := func() (geo, int, error) {
		var g geo
		err := p.Read(ctx, `(() => { const s = `+sliderJS+`; const r = `+mouseRectJS+`;
			return {track: r(s), handle: r(s.querySelector('.ui-slider-handle')), vertical: s.classList.contains('ui-slider-vertical'), val: (`+valJS+`).textContent}; })()`, &g)
		if err != nil {
			return g, 0, err
		}
		v, err := strconv.Atoi(strings.TrimSpace(g.Val))
		if err != nil {
			return g, 0, fmt.Errorf("unable to read the slider's value %q", g.Val)
		}
		return g, v, nil
	}
	g, v, err := read()
	if err != nil {
		return err
	}
	// pos is a point's place along the track; at returns the point.
	pos := func(x, y float64) float64 {
		if g.Vertical {
			return y
		}
		return x
	}
	at := func(t float64) (float64, float64) {
		if g.Vertical {
			return g.Track.cx(), t
		}
		return t, g.Track.cy()
	}
	lo, hi := g.Track.Left, g.Track.Left+g.Track.Width
	if g.Vertical {
		lo, hi = g.Track.Top, g.Track.Top+g.Track.Height
	}
	// Known (place, value) pairs: the handle's centre shows v.
	type obs struct{ t, v float64 }
	seen := []obs{{pos(g.Handle.cx(), g.Handle.cy()), float64(v)}}
	for try := 0; try < 4 && v != want; try++ {
		var t float64
		if len(seen) == 1 {
			// The quarter farthest from the handle.
			t = lo + (hi-lo)/4
			if u := hi - (hi-lo)/4; math.Abs(u-seen[0].t) > math.Abs(t-seen[0].t) {
				t = u
			}
		} else {
			a, b := seen[0], seen[len(seen)-1]
			for _, o := range seen {
				if math.Abs(o.t-a.t) > math.Abs(b.t-a.t) {
					b = o
				}
			}
			if a.v == b.v {
				return fmt.Errorf("the slider does not move")
			}
			slope := (b.v - a.v) / (b.t - a.t)
			goal := b.t + (float64(want)-b.v)/slope
			// The grid's place nearest the goal along the track.
			best := math.Inf(1)
			for _, c := range mouseGridLine(p, g.Vertical, lo+0.5, hi-0.5) {
				if d := math.Abs(c - goal); d < best {
					best, t = d, c
				}
			}
			if best == math.Inf(1) {
				break
			}
			// A click no closer than half a value's width would not do
			// better than the last ones: the keys finish.
			if best > math.Abs(1/slope)/2 && try >= 2 {
				break
			}
		}
		x, y := at(t)
		x, y = mouseSnap(p, x, y)
		if err := p.Do(ctx, env.Action{Type: env.MouseClick, X: x, Y: y}); err != nil {
			return err
		}
		if g, v, err = read(); err != nil {
			return err
		}
		seen = append(seen, obs{pos(x, y), float64(v)})
	}
	for i := 0; v != want && i < 30; i++ {
		key := "ArrowUp"
		if v > want {
			key = "ArrowDown"
		}
		if err := p.ByJS(ctx, sliderJS+`.querySelector('.ui-slider-handle')`, env.Action{Type: env.Press, Key: key}); err != nil {
			return err
		}
		if _, v, err = read(); err != nil {
			return err
		}
	}
	if v != want {
		return fmt.Errorf("the slider shows %d, want %d", v, want)
	}
	return nil
}

func mouseUseSlider(ctx context.Context, p *Play) error {
	s, err := p.Between("Select ", " with the slider")
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("unable to read the value %q", s)
	}
	if err := mouseSliderSet(ctx, p, `document.querySelector('#slider')`, `document.querySelector('#val')`, n); err != nil {
		return err
	}
	return p.By(ctx, submit, click)
}

func mouseUseSlider2(ctx context.Context, p *Play) error {
	c, err := p.Between("combination ", " and submit")
	if err != nil {
		return err
	}
	nums := mouseNumRe.FindAllString(c, -1)
	if len(nums) != 3 {
		return fmt.Errorf("unable to read the combination %q", c)
	}
	for i, s := range nums {
		n, _ := strconv.Atoi(s)
		if err := mouseSliderSet(ctx, p, fmt.Sprintf(`document.querySelector('#slider-%d')`, i+1), fmt.Sprintf(`document.querySelector('#val-%d')`, i+1), n); err != nil {
			return err
		}
	}
	return p.By(ctx, submit, click)
}

// mouseSortItems reads a jQuery UI sortable's items: their texts and
// boxes, in order.
func mouseSortItems(ctx context.Context, p *Play) ([]string, []mouseRect, error) {
	var items []struct {
		Text string
		Box  mouseRect
	}
	if err := p.Read(ctx, `[...document.querySelectorAll('#sortable li')].map(e => ({text: e.textContent.trim(), box: `+mouseRectJS+`(e)}))`, &items); err != nil {
		return nil, nil, err
	}
	if len(items) == 0 {
		return nil, nil, fmt.Errorf("no items on the page")
	}
	texts, boxes := make([]string, len(items)), make([]mouseRect, len(items))
	for i, it := range items {
		texts[i], boxes[i] = it.Text, it.Box
	}
	return texts, boxes, nil
}

// mouseSortSim plays jQuery UI sortable's (1.12) handling of a drag of
// item from whose pointer visits pts (the press, then the moves) over
// slots (the items' boxes, which the placeholder keeps: a slot holds
// whatever is at its index of the order). Each move past the first
// compares the pointer with the item under it: moving down (a floating
// grid: right, or down) past its middle (a grid moving sideways: its
// middle across) puts the placeholder after it, up (left) before it. It
// returns where the item is dropped and how far the pointer came to any
// edge or middle it was judged by (a margin for the page's rounding of
// the pointer).
func mouseSortSim(slots []mouseRect, from int, pts [][2]float64, floating bool) (int, float64) {
	order := make([]int, len(slots))
	for i := range order {
		order[i] = i
	}
	order[from] = -1 // the placeholder
	margin := math.Inf(1)
	near := func(d float64) { margin = math.Min(margin, math.Abs(d)) }
	idx := func(e int) int {
		for i, o := range order {
			if o == e {
				return i
			}
		}
		return -1
	}
	for k := 1; k < len(pts); k++ {
		x, y := pts[k][0], pts[k][1]
		dx, dy := x-pts[k-1][0], y-pts[k-1][1]
		// The pointer near an edge of any slot: which is under it is
		// uncertain.
		at := -1
		for i, s := range slots {
			inX, inY := x >= s.Left && x < s.Left+s.Width, y >= s.Top && y < s.Top+s.Height
			if inY {
				near(x - s.Left)
				near(x - s.Left - s.Width)
			}
			if inX {
				near(y - s.Top)
				near(y - s.Top - s.Height)
			}
			if inX && inY {
				at = i
			}
		}
		if at < 0 || order[at] == -1 {
			continue
		}
		if k == 1 {
			// The first move's direction is from where the last drag left
			// the page: unknown.
			return -1, 0
		}
		s := slots[at]
		var o int
		switch {
		case floating && (dx > 0 || dy > 0):
			o = 2
		case floating:
			o = 1
		case dy > 0:
			o = 2
		case dy < 0:
			o = 1
		default:
			continue
		}
		pi := idx(-1)
		if o == 1 && pi+1 < len(order) && pi+1 == at || o == 2 && pi-1 >= 0 && pi-1 == at {
			continue
		}
		var sides bool
		if floating && dx != 0 {
			near(x - s.cx())
			sides = dx > 0 == (x >= s.cx())
		} else {
			near(y - s.cy())
			sides = dy != 0 && dy > 0 == (y >= s.cy())
		}
		if !sides {
			continue
		}
		e := order[at]
		order = append(order[:pi], order[pi+1:]...)
		at = idx(e)
		if o == 2 {
			at++
		}
		order = append(order[:at], append([]int{-1}, order[at:]...)...)
	}
	return idx(-1), margin
}

// mouseSortDrag drags item from of the sortable whose slots are given to
// index to in one straight drag: it tries the policy's points for the
// press (on the item) and the release, plays each drag by mouseSortSim
// (the env's drag moves in 8 equal steps), and takes, of those that end
// right, the one with the widest margin (then the shortest) that still
// ends right with every point shifted by up to a pixel.
func mouseSortDrag(ctx context.Context, p *Play, slots []mouseRect, from, to int, floating bool) error {
	// The sortable scrolls the page when the pointer comes within 20 px
	// of the window's edge: every point stays clear of them.
	w, h := float64(p.Obs.Viewport.W), float64(p.Obs.Viewport.H)
	src := slots[from]
	presses := mouseGridPoints(p, math.Max(src.Left+2, 21), math.Max(src.Top+2, 21), math.Min(src.Left+src.Width-2, w-21), math.Min(src.Top+src.Height-2, h-21))
	var lo, hi mouseRect = slots[0], slots[0]
	for _, s := range slots {
		lo.Left, lo.Top = math.Min(lo.Left, s.Left), math.Min(lo.Top, s.Top)
		hi.Left, hi.Top = math.Max(hi.Left, s.Left+s.Width), math.Max(hi.Top, s.Top+s.Height)
	}
	releases := mouseGridPoints(p, math.Max(lo.Left-5, 21), math.Max(lo.Top-5, 21), math.Min(hi.Left+5, w-21), math.Min(hi.Top+5, h-21))
	const stepsN = 8
	path := func(a, b [2]float64, sx, sy float64) [][2]float64 {
		pts := make([][2]float64, stepsN+1)
		for i := range pts {
			f := float64(i) / stepsN
			pts[i] = [2]float64{a[0] + (b[0]-a[0])*f + sx, a[1] + (b[1]-a[1])*f + sy}
		}
		return pts
	}
	type pick struct {
		a, b           [2]float64
		margin, length float64
	}
	var picks []pick
	for _, a := range presses {
		for _, b := range releases {
			dx, dy := b[0]-a[0], b[1]-a[1]
			// Each move's direction must be sure: none, or over a pixel.
			if dx != 0 && math.Abs(dx)/stepsN < 1.5 || dy != 0 && math.Abs(dy)/stepsN < 1.5 {
				continue
			}
			if got, margin := mouseSortSim(slots, from, path(a, b, 0, 0), floating); got == to {
				picks = append(picks, pick{a, b, margin, math.Hypot(dx, dy)})
			}
		}
	}
	if len(picks) == 0 {
		return fmt.Errorf("no drag moves item %d to %d", from+1, to+1)
	}
	slices.SortFunc(picks, func(x, y pick) int {
		if c := cmp.Compare(math.Round(y.margin*4), math.Round(x.margin*4)); c != 0 {
			return c
		}
		return cmp.Compare(x.length, y.length)
	})
	best := picks[0]
	shifts := []float64{-1, -0.5, 0.5, 1}
robust:
	for _, c := range picks[:min(len(picks), 3000)] {
		for _, sx := range shifts {
			for _, sy := range shifts {
				if got, _ := mouseSortSim(slots, from, path(c.a, c.b, sx, sy), floating); got != to {
					continue robust
				}
			}
		}
		best = c
		break
	}
	return p.Do(ctx, env.Action{Type: env.MouseDragAndDrop, X: best.a[0], Y: best.a[1], ToX: best.b[0], ToY: best.b[1]})
}

var mouseDragItemsRe = regexp.MustCompile(`^Drag (.+) (to the top|to the bottom|down by one position|up by one position|to the (\d)(?:st|nd|rd|th) position)\.$`)

// mouseDragSource reads a drag task's instruction by re (its first group
// names the item) and the sortable's items: the match, the items' texts
// and boxes, and the named item's index.
func mouseDragSource(ctx context.Context, p *Play, re *regexp.Regexp) (m, texts []string, boxes []mouseRect, from int, err error) {
	if m = re.FindStringSubmatch(p.Obs.Instruction); m == nil {
		return nil, nil, nil, -1, fmt.Errorf("unable to read %q", p.Obs.Instruction)
	}
	if texts, boxes, err = mouseSortItems(ctx, p); err != nil {
		return nil, nil, nil, -1, err
	}
	if from = slices.Index(texts, m[1]); from < 0 {
		return nil, nil, nil, -1, fmt.Errorf("no item %q", m[1])
	}
	return m, texts, boxes, from, nil
}

// mouseDragItems drags the named item of the list to the asked place.
func mouseDragItems(ctx context.Context, p *Play) error {
	m, texts, boxes, from, err := mouseDragSource(ctx, p, mouseDragItemsRe)
	if err != nil {
		return err
	}
	var to int
	switch m[2] {
	case "to the top":
		to = 0
	case "to the bottom":
		to = len(texts) - 1
	case "down by one position":
		to = from + 1
	case "up by one position":
		to = from - 1
	default:
		n, _ := strconv.Atoi(m[3])
		to = n - 1
	}
	return mouseSortDrag(ctx, p, boxes, from, to, false)
}

var mouseDragGridRe = regexp.MustCompile(`^Drag (.+) (to the [a-z ]+|up by one|down by one|left by one|right by one)\.$`)

// mouseGridPlaces are drag-items-grid's places, 0-based in reading order.
var mouseGridPlaces = map[string]int{
	"to the top left": 0, "to the top center": 1, "to the top right": 2,
	"to the center left": 3, "to the center": 4, "to the center right": 5,
	"to the bottom left": 6, "to the bottom center": 7, "to the bottom right": 8,
}

// mouseDragItemsGrid drags the named item of the 3x3 grid to the asked
// place.
func mouseDragItemsGrid(ctx context.Context, p *Play) error {
	m, texts, boxes, from, err := mouseDragSource(ctx, p, mouseDragGridRe)
	if err != nil {
		return err
	}
	to, ok := mouseGridPlaces[m[2]]
	if !ok {
		to, ok = map[string]int{"up by one": from - 3, "down by one": from + 3, "left by one": from - 1, "right by one": from + 1}[m[2]]
	}
	if !ok || to < 0 || to >= len(texts) {
		return fmt.Errorf("unknown place %q", m[2])
	}
	return mouseSortDrag(ctx, p, boxes, from, to, true)
}

// mouseDragSortNumbers sorts the list by dragging, smallest first: each
// drag brings the smallest of the unsorted rest up to its place.
func mouseDragSortNumbers(ctx context.Context, p *Play) error {
	for range 6 {
		texts, boxes, err := mouseSortItems(ctx, p)
		if err != nil {
			return err
		}
		nums := make([]int, len(texts))
		for i, t := range texts {
			if nums[i], err = strconv.Atoi(t); err != nil {
				return fmt.Errorf("unable to read the number %q", t)
			}
		}
		done := true
		for i := range nums {
			j := i
			for k := i + 1; k < len(nums); k++ {
				if nums[k] < nums[j] {
					j = k
				}
			}
			if j != i {
				if err := mouseSortDrag(ctx, p, boxes, j, i, false); err != nil {
					return err
				}
				done = false
				break
			}
		}
		if done {
			return p.By(ctx, submit, click)
		}
	}
	return fmt.Errorf("the numbers are not sorted after 6 drags")
}

// mouseCube is drag-cube's cube as it shows: its rotation (degrees about
// the x and y axes; the page's positionY and positionX), whether it still
// spins (torque over 1 turns it each frame), and the face marked active.
type mouseCube struct {
	X, Y     float64
	Spinning bool
	Active   string
}

// mouseCubeFace is the face the page makes active at rotation (x, y)
// (its animate's table).
func mouseCubeFace(x, y float64) int {
	x, y = mouseDeg(x), mouseDeg(y)
	switch {
	case y >= 46 && y <= 130:
		return 6
	case y >= 220 && y <= 308:
		return 1
	}
	upside := y > 90 && y < 270
	col := 3 // x in [315, 360) or [0, 42)
	switch {
	case x >= 42 && x <= 130:
		col = 0
	case x >= 131 && x <= 223:
		col = 1
	case x >= 224 && x <= 314:
		col = 2
	}
	if upside {
		return [4]int{3, 2, 5, 4}[col]
	}
	return [4]int{5, 4, 3, 2}[col]
}

// mouseDeg is an angle in [0, 360).
func mouseDeg(v float64) float64 { return math.Mod(math.Mod(v, 360)+360, 360) }

// mouseWrap is an angle difference in [-180, 180).
func mouseWrap(d float64) float64 { return mouseDeg(d+180) - 180 }

// mouseCubeMargin is how far (degrees) rotation (x, y) rests from the
// nearest rotation where the page's table gives another face: a cube at
// rest by a boundary shows the face, but the least turn changes it.
func mouseCubeMargin(x, y float64) float64 {
	x, y = mouseDeg(x), mouseDeg(y)
	dist := func(v float64, at ...float64) float64 {
		m := 360.0
		for _, a := range at {
			m = math.Min(m, math.Abs(mouseWrap(v-a)))
		}
		return m
	}
	m := dist(y, 46, 130, 220, 308)
	if f := mouseCubeFace(x, y); f != 6 && f != 1 {
		m = math.Min(m, dist(x, 42, 130.5, 223.5, 314.5))
	}
	return m
}

// mouseDragCube turns the cube by drags until the asked face is active:
// a drag spins it (the page's torque: about 2.3° per pixel, fading over
// half a second), so each drag aims at the middle of the face's range of
// rotations from where the cube came to rest, learning the degrees per
// pixel as it goes. Up and down turn about x (to faces 6 and 1); sideways
// about y (2 to 5, reversed when the cube is upside down).
func mouseDragCube(ctx context.Context, p *Play) error {
	q, err := p.Between(`so that "`, `" is the active`)
	if err != nil {
		return err
	}
	want, err := strconv.Atoi(q)
	if err != nil || want < 1 || want > 6 {
		return fmt.Errorf("unknown face %q", q)
	}
	read := func() (mouseCube, error) {
		var c mouseCube
		err := p.Read(ctx, `(() => { const v = cube.viewport; return {x: v.positionX, y: v.positionY,
			spinning: Math.abs(v.torqueX) > 1 || Math.abs(v.torqueY) > 1, active: document.querySelector('.cube-image.active').textContent.trim()}; })()`, &c)
		return c, err
	}
	var vp, sub mouseRect
	if err := p.Read(ctx, mouseRectJS+`(document.querySelector('.viewport'))`, &vp); err != nil {
		return err
	}
	if err := p.Read(ctx, mouseRectJS+`(document.querySelector('#subbtn'))`, &sub); err != nil {
		return err
	}
	// Drags start at the cube's middle; the pointer first rests there so
	// that its move to the press is not taken for a turn.
	sx, sy := vp.cx(), vp.cy()
	perPx := 2.3
	for range 8 {
		c, err := read()
		if err != nil {
			return err
		}
		for i := 0; c.Spinning && i < 3; i++ {
			if err := mouseWait(ctx, p); err != nil {
				return err
			}
			if c, err = read(); err != nil {
				return err
			}
		}
		if c.Active == q && !c.Spinning && mouseCubeMargin(c.X, c.Y) >= 8 {
			// The page takes a pointer's travel while its button is down
			// for a turn, and reads the move and the press together when
			// they fall in one of its 50 ms frames (it did on a loaded CI
			// machine): the pointer rests on Submit for a frame first,
			// the face is read again, and the press is where it rests.
			bx, by := mouseSnap(p, sub.cx(), sub.cy())
			if err := mouseMoveTo(ctx, p, bx, by); err != nil {
				return err
			}
			if err := mouseWait(ctx, p); err != nil {
				return err
			}
			if c, err = read(); err != nil {
				return err
			}
			if c.Active == q && !c.Spinning {
				return p.Do(ctx, env.Action{Type: env.MouseClick, X: bx, Y: by})
			}
		}
		y := mouseDeg(c.Y)
		var dx, dy float64 // degrees to turn
		switch {
		case want == 6:
			dy = mouseWrap(88 - y)
		case want == 1:
			dy = mouseWrap(264 - y)
		case !(y < 31 || y > 323 || y > 145 && y < 205):
			// Turn to a side face: upright (0) or upside down (180).
			dy = mouseWrap(0 - y)
			if d := mouseWrap(180 - y); math.Abs(d) < math.Abs(dy) {
				dy = d
			}
		default:
			upside := y > 90 && y < 270
			mid := map[int]float64{5: 86, 4: 177, 3: 269, 2: 0}
			if upside {
				mid = map[int]float64{3: 86, 2: 177, 5: 269, 4: 0}
			}
			dx = mouseWrap(mid[want] - c.X)
			if upside {
				dx = -dx
			}
		}
		if mouseCubeFace(c.X, y) == want && c.Active != q {
			// At the face but not marked (the page marks a face only when
			// a turn changes it, and a new episode does not forget the
			// last one's): turn away, then back.
			dx, dy = 0, 70
		}
		// The page turns y by -torque (a drag down turns it back) and x
		// by +torque.
		px, py := mouseClamp(dx/perPx, 45), mouseClamp(-dy/perPx, 45)
		if px != 0 && math.Abs(px) < 8 {
			px = math.Copysign(8, px)
		}
		if py != 0 && math.Abs(py) < 8 {
			py = math.Copysign(8, py)
		}
		if err := mouseMoveTo(ctx, p, sx, sy); err != nil {
			return err
		}
		if err := mouseDrag(ctx, p, sx, sy, sx+px, sy+py); err != nil {
			return err
		}
		if err := mouseWait(ctx, p); err != nil {
			return err
		}
		// Learn the degrees per pixel from the turn made.
		after, err := read()
		if err != nil {
			return err
		}
		if !after.Spinning {
			var turned, asked float64
			if px != 0 {
				turned, asked = math.Abs(mouseWrap(after.X-c.X)), math.Abs(px)
			} else {
				turned, asked = math.Abs(mouseWrap(after.Y-c.Y)), math.Abs(py)
			}
			if r := turned / asked; r > 0.5 && r < 6 {
				perPx = r
			}
		}
	}
	return fmt.Errorf("the cube does not show face %d after 8 turns", want)
}

func mouseClamp(v, m float64) float64 { return math.Max(-m, math.Min(m, v)) }

var mouseCalendarRe = regexp.MustCompile(`^Create a (.+) event named "(.+)", between (\S+) and (\S+)\.$`)

// mouseDailyCalendar makes the asked event in the asked window, named. The
// page starts an event on a press on a half hour, stretches it to the
// half hour the pointer then moves over, and opens its naming box on a
// release over the event. It draws the event where its own arithmetic
// puts it, about two half hours above the slots (the calendar column
// wraps below each hour's label in this browser), so a drag would pass
// over other half hours before reaching it: a click on the first half
// hour, a move to the last and a click on the event do it, at points
// where the half hour is on top (the next hour's label and the page's
// other events cover parts of it). The calendar
// scrolls by the policy's scroll (half the viewport down) until the
// half hours, the event and its naming box (82 px) are in view.
func mouseDailyCalendar(ctx context.Context, p *Play) error {
	m := mouseCalendarRe.FindStringSubmatch(p.Obs.Instruction)
	if m == nil {
		return fmt.Errorf("unable to read %q", p.Obs.Instruction)
	}
	d, ok := map[string]int{"30 mins": 1, "0.5 hours": 1, "60 mins": 2, "1 hour": 2, "90 mins": 3, "1.5 hours": 3}[m[1]]
	if !ok {
		return fmt.Errorf("unknown duration %q", m[1])
	}
	lo, ok := map[string]int{"8AM": 16, "12PM": 24, "4PM": 32}[m[3]]
	if !ok {
		return fmt.Errorf("unknown window %q", m[3])
	}
	hi := lo + 8
	type page struct {
		Area        mouseRect
		Scroll, Max float64
		Halves      []mouseRect
	}
	for range 12 {
		var pg page
		if err := p.Read(ctx, `(() => { const a = document.querySelector('#area'), r = `+mouseRectJS+`;
			return {area: r(a), scroll: a.scrollTop, max: a.scrollHeight - a.clientHeight,
				halves: [...Array(48).keys()].map(i => r(document.getElementById('hh-' + i)))}; })()`, &pg); err != nil {
			return err
		}
		if len(pg.Halves) != 48 {
			return fmt.Errorf("the calendar has %d half hours", len(pg.Halves))
		}
		top, bottom := pg.Area.Top, pg.Area.Top+pg.Area.Height
		pick := -1
		for s := lo; s+d <= hi; s++ {
			// The page's top for the event: 20.42 px a half hour, 4 px
			// down, in the scrolled area.
			ev := top + 4 + 20.42*float64(s) - pg.Scroll
			first, last := pg.Halves[s], pg.Halves[s+d-1]
			if ev >= top+1 && ev+84 <= bottom && first.Top >= top+1 && last.Top+16 <= bottom {
				pick = s
				break
			}
		}
		if pick < 0 {
			if pg.Scroll >= pg.Max-1 {
				return fmt.Errorf("no %d half hours between hh-%d and hh-%d fit the view", d, lo, hi)
			}
			// The wheel over a half hour in view scrolls the calendar
			// (the page lists no element for the calendar itself).
			bid := ""
			for _, el := range p.Obs.Elements {
				if _, cy := el.Box.Center(); el.InViewport && strings.HasPrefix(el.DOMID, "hh-") && cy > top && cy < bottom {
					bid = el.BID
					break
				}
			}
			if bid == "" {
				return fmt.Errorf("no half hour in view to scroll at")
			}
			if err := p.Do(ctx, env.Action{Type: env.Scroll, BID: bid, DY: float64(p.Obs.Viewport.H) / 2}); err != nil {
				return err
			}
			continue
		}
		// Points where the half hour itself is on top (not the next
		// hour's label over it, nor another event).
		press, err := mouseTopPoint(ctx, p, fmt.Sprintf("hh-%d", pick), nil)
		if err != nil {
			return err
		}
		move, err := mouseTopPoint(ctx, p, fmt.Sprintf("hh-%d", pick+d-1), &press)
		if err != nil {
			return err
		}
		return steps(func() error { return p.Do(ctx, env.Action{Type: env.MouseClick, X: press[0], Y: press[1]}) },
			func() error { return p.Do(ctx, env.Action{Type: env.MouseMove, X: move[0], Y: move[1]}) },
			func() error { return p.By(ctx, "#newEvent", click) },
			func() error { return p.By(ctx, "#event-name", fill(m[2])) },
			func() error { return p.By(ctx, "#create-event .create", click) })
	}
	return fmt.Errorf("the calendar did not scroll to the window")
}

// mouseTopPoint returns a policy's point where the element with DOM id id
// is the one the pointer meets, other than not (nil: any), nearest its
// middle.
func mouseTopPoint(ctx context.Context, p *Play, id string, not *[2]float64) ([2]float64, error) {
	var r mouseRect
	if err := p.Read(ctx, mouseRectJS+fmt.Sprintf(`(document.getElementById(%q))`, id), &r); err != nil {
		return [2]float64{}, err
	}
	var pts [][2]float64
	for _, pt := range mouseGridPoints(p, r.Left+1.5, r.Top+2, r.Left+r.Width-1.5, r.Top+r.Height-2) {
		if not == nil || pt != *not {
			pts = append(pts, pt)
		}
	}
	slices.SortFunc(pts, func(a, b [2]float64) int {
		return cmp.Compare(math.Hypot(a[0]-r.cx(), a[1]-r.cy()), math.Hypot(b[0]-r.cx(), b[1]-r.cy()))
	})
	var i int
	if err := p.Read(ctx, fmt.Sprintf(`(pts => pts.findIndex(([x, y]) => { const e = document.elementFromPoint(x, y); return e && e.id === %q; }))(%s)`, id, mouseJSON(pts)), &i); err != nil {
		return [2]float64{}, err
	}
	if i < 0 {
		return [2]float64{}, fmt.Errorf("no point reaches #%s", id)
	}
	return pts[i], nil
}

func mouseJSON(pts [][2]float64) string {
	var b strings.Builder
	b.WriteString("[")
	for i, pt := range pts {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "[%g,%g]", pt[0], pt[1])
	}
	b.WriteString("]")
	return b.String()
}

// mouseHotBands are hot-cold's signals by distance (its displayText).
var mouseHotBands = []struct {
	max  float64
	text string
}{{5, "HOT"}, {10, "WARM"}, {40, "COLD"}, {math.Inf(1), "ICE COLD"}}

// mouseHotCold finds the hidden spot by the page's hints: it keeps the
// spots (whole pixels, as the page draws them) consistent with every hint
// so far, moves the pointer where the hint splits them best (the least
// expected number left), and clicks where every spot left is within the
// hot distance, or where the hint said HOT.
func mouseHotCold(ctx context.Context, p *Play) error {
	var area mouseRect
	if err := p.Read(ctx, mouseRectJS+`(document.querySelector('#touch-area'))`, &area); err != nil {
		return err
	}
	// The page measures from (pageX, pageY - 50); its spot is at
	// (5..154, 5..119) of that.
	const top = 50
	var cands [][2]float64
	for x := 5; x < 155; x++ {
		for y := 5; y < 120; y++ {
			cands = append(cands, [2]float64{float64(x), float64(y + top)})
		}
	}
	probes := mouseGridPoints(p, area.Left+1.5, area.Top+1.5, area.Left+area.Width-1.5, area.Top+area.Height-1.5)
	dist := func(a, b [2]float64) float64 { return math.Hypot(a[0]-b[0], a[1]-b[1]) }
	// The page may round the pointer: a hint is taken with a pixel's
	// slack.
	const slack = 1.0
	for range 30 {
		// A point every spot left is hot from: click it.
		for _, q := range probes {
			all := true
			for _, c := range cands {
				if dist(q, c) >= 5-slack {
					all = false
					break
				}
			}
			if all {
				return p.Do(ctx, env.Action{Type: env.MouseClick, X: q[0], Y: q[1]})
			}
		}
		var best [2]float64
		bestScore := math.Inf(1)
		var counts [4]int
		for _, q := range probes {
			counts = [4]int{}
			for _, c := range cands {
				dx, dy := q[0]-c[0], q[1]-c[1]
				switch d2 := dx*dx + dy*dy; {
				case d2 < 25:
					counts[0]++
				case d2 < 100:
					counts[1]++
				case d2 < 1600:
					counts[2]++
				default:
					counts[3]++
				}
			}
			score := 0.0
			for _, n := range counts {
				score += float64(n * n)
			}
			if score < bestScore {
				bestScore, best = score, q
			}
		}
		if err := p.Do(ctx, env.Action{Type: env.MouseMove, X: best[0], Y: best[1]}); err != nil {
			return err
		}
		var sig string
		if err := p.Read(ctx, `(() => { const s = document.querySelector('#signal'); return s ? s.textContent.trim() : ''; })()`, &sig); err != nil {
			return err
		}
		band := -1
		for i, b := range mouseHotBands {
			if b.text == sig {
				band = i
			}
		}
		if band < 0 {
			return fmt.Errorf("no hint after a move to (%.1f, %.1f): %q", best[0], best[1], sig)
		}
		if band == 0 {
			return p.Do(ctx, env.Action{Type: env.MouseClick, X: best[0], Y: best[1]})
		}
		lo := 0.0
		if band > 0 {
			lo = mouseHotBands[band-1].max
		}
		hi := mouseHotBands[band].max
		kept := cands[:0]
		for _, c := range cands {
			if d := dist(best, c); d+slack >= lo && d-slack < hi {
				kept = append(kept, c)
			}
		}
		cands = kept
		if len(cands) == 0 {
			return fmt.Errorf("no spot fits the hints")
		}
	}
	return fmt.Errorf("the spot is not found after 30 hints")
}

// mouseGradedQueryPad is the graded drawings' QUERY_PADDING: the page
// draws a click at (pageX, pageY − 50) of its SVG, whatever the SVG's
// place (2 px right of and below that, in this layout).
const mouseGradedQueryPad = 50

// mouseGradedClick clicks, among the policy's points where a click
// reaches the drawing's SVG (not the Submit button over its foot), the
// one the page scores best, and submits. score takes the click as the
// page places it in the SVG (its blue circle's centre) and returns the
// page's reward for it.
func mouseGradedClick(ctx context.Context, p *Play, score func(x, y float64) float64) error {
	var g struct {
		SVG    mouseRect
		SX, SY float64
	}
	if err := p.Read(ctx, `({svg: `+mouseRectJS+`(document.querySelector('#svg-grid')), sx: window.scrollX, sy: window.scrollY})`, &g); err != nil {
		return err
	}
	// at is the page's place for a click at viewport point pt: the
	// browser gives a mouse event's pageX and pageY in whole pixels,
	// rounded down.
	at := func(pt [2]float64) (float64, float64) {
		return math.Floor(pt[0] + g.SX), math.Floor(pt[1]+g.SY) - mouseGradedQueryPad
	}
	type cand struct {
		pt    [2]float64
		score float64
	}
	var cands []cand
	grid, err := mouseGradedGrid(p, g.SVG.Left, g.SVG.Top, g.SVG.Left+g.SVG.Width, g.SVG.Top+g.SVG.Height)
	if err != nil {
		return err
	}
	for _, pt := range grid {
		x, y := at(pt)
		// A point within a rounding error of a whole pixel may fall on
		// either side of it: left out.
		if fx, fy := pt[0]+g.SX-x, pt[1]+g.SY-mouseGradedQueryPad-y; fx < 0.01 || fx > 0.99 || fy < 0.01 || fy > 0.99 {
			continue
		}
		if s := score(x, y); !math.IsNaN(s) && s > 0 {
			cands = append(cands, cand{pt, s})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(b.score, a.score) })
	if len(cands) > 200 {
		cands = cands[:200]
	}
	pts := make([][2]float64, len(cands))
	for i, c := range cands {
		pts[i] = c.pt
	}
	var i int
	if err := p.Read(ctx, `(pts => { const svg = document.querySelector('#svg-grid');
		return pts.findIndex(([x, y]) => { const e = document.elementFromPoint(x, y); return e && e.closest('svg') === svg; }); })(`+mouseJSON(pts)+`)`, &i); err != nil {
		return err
	}
	if i < 0 {
		return fmt.Errorf("no point of the drawing scores above 0")
	}
	pt := cands[i].pt
	if err := p.Do(ctx, env.Action{Type: env.MouseClick, X: pt[0], Y: pt[1]}); err != nil {
		return err
	}
	// The page drew the click where the score assumed.
	var b struct{ X, Y float64 }
	if err := p.Read(ctx, `(() => { const c = document.querySelector('#blue-circle'); return c ? {x: +c.getAttribute('cx'), y: +c.getAttribute('cy')} : {x: NaN, y: NaN}; })()`, &b); err != nil {
		return err
	}
	if x, y := at(pt); math.Abs(b.X-x) > 0.01 || math.Abs(b.Y-y) > 0.01 {
		return fmt.Errorf("the click at (%g, %g) was drawn at (%g, %g), want (%g, %g)", pt[0], pt[1], b.X, b.Y, x, y)
	}
	return p.By(ctx, submit, click)
}

// mouseGradedFrameSide is the longer side of the wire frame the policy
// sees the page in (the actor's default frame size).
const mouseGradedFrameSide = 128

// mouseGradedGrid lists, inside the rectangle [x0, x1) x [y0, y1) of the
// viewport, the points the policy's point head acts at, exactly (to the
// pixel's fraction, which the graded pages' whole-pixel clicks turn on):
// its 64x64 positions are centres in the wire frame (the screenshot
// fitted into 128 px, its sides rounded: 98x128 for a 160x210 page, so
// across they are 2.512 CSS px apart, not mouseSnap's 2.5), computed in
// float32 as the policy's PointAt does, and brought back to CSS pixels by
// the frame's height scale, as the actor's EnvAction does.
func mouseGradedGrid(p *Play, x0, y0, x1, y1 float64) ([][2]float64, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(p.Obs.Screenshot))
	if err != nil {
		return nil, fmt.Errorf("unable to read the screenshot's size: %w", err)
	}
	fw, fh := frame.Fit(cfg.Width, cfg.Height, mouseGradedFrameSide)
	if p.Obs.Viewport.H <= 0 {
		return nil, fmt.Errorf("the observation has no viewport")
	}
	scale := float64(fh) / float64(p.Obs.Viewport.H)
	at := func(i, side int) float64 {
		return float64((float32(i)+0.5)*float32(side)/float32(mouseGrid)) / scale
	}
	var out [][2]float64
	for j := 0; j < mouseGrid; j++ {
		y := at(j, fh)
		if y < y0 || y >= y1 {
			continue
		}
		for i := 0; i < mouseGrid; i++ {
			if x := at(i, fw); x >= x0 && x < x1 {
				out = append(out, [2]float64{x, y})
			}
		}
	}
	return out, nil
}

// mouseGradedCircles reads the centres and radii of the SVG's circles
// that css finds, in the page's order.
func mouseGradedCircles(ctx context.Context, p *Play, css string, want int) ([]struct{ X, Y, R float64 }, error) {
	var cs []struct{ X, Y, R float64 }
	if err := p.Read(ctx, fmt.Sprintf(`[...document.querySelectorAll(%q)].map(c => ({x: +c.getAttribute('cx'), y: +c.getAttribute('cy'), r: +c.getAttribute('r')}))`, css), &cs); err != nil {
		return nil, err
	}
	if len(cs) != want {
		return nil, fmt.Errorf("%d circles %s, want %d", len(cs), css, want)
	}
	return cs, nil
}

// mouseAngle is the pages' findAngle: the angle at v between a and b, in
// degrees (NaN where the cosine rounds past 1).
func mouseAngle(ax, ay, bx, by, vx, vy float64) float64 {
	av, bv, ab := math.Hypot(vx-ax, vy-ay), math.Hypot(vx-bx, vy-by), math.Hypot(bx-ax, by-ay)
	return math.Acos((bv*bv+av*av-ab*ab)/(2*bv*av)) * 180 / math.Pi
}

// mouseCircleCenter clicks the circle's centre. The page scores
// (r − d)/r, d from the click's circle's box corner (its centre − 3.5)
// to the centre − 3: the best click is half a pixel right of and below
// the centre.
func mouseCircleCenter(ctx context.Context, p *Play) error {
	cs, err := mouseGradedCircles(ctx, p, "#svg-grid circle.black-circle", 1)
	if err != nil {
		return err
	}
	c := cs[0]
	return mouseGradedClick(ctx, p, func(x, y float64) float64 {
		d := math.Hypot(x-0.5-c.X, y-0.5-c.Y)
		if d >= c.R {
			return -1
		}
		return (c.R - d) / c.R
	})
}

// mouseFindMidpoint clicks the midpoint of the two dots: the page scores
// (30 − d)/30, d from the click to their centres' mean.
func mouseFindMidpoint(ctx context.Context, p *Play) error {
	cs, err := mouseGradedCircles(ctx, p, "#svg-grid circle.black-circle", 2)
	if err != nil {
		return err
	}
	mx, my := (cs[0].X+cs[1].X)/2, (cs[0].Y+cs[1].Y)/2
	return mouseGradedClick(ctx, p, func(x, y float64) float64 {
		d := math.Hypot(x-mx, y-my)
		if d >= 30 {
			return -1
		}
		return (30 - d) / 30
	})
}

// mouseBisectAngle clicks a point on the bisector of the angle at the
// blue dot between the two black ones. The page scores (total − the
// larger of the click's angles to each side)/(total/2), from the
// circles' boxes (all 3.5 px circles: their centres do).
func mouseBisectAngle(ctx context.Context, p *Play) error {
	vs, err := mouseGradedCircles(ctx, p, "#svg-grid circle.init-blue", 1)
	if err != nil {
		return err
	}
	bs, err := mouseGradedCircles(ctx, p, "#svg-grid circle.init-black", 2)
	if err != nil {
		return err
	}
	v, a, b := vs[0], bs[0], bs[1]
	total := mouseAngle(a.X, a.Y, b.X, b.Y, v.X, v.Y)
	return mouseGradedClick(ctx, p, func(x, y float64) float64 {
		ua, ub := mouseAngle(a.X, a.Y, x, y, v.X, v.Y), mouseAngle(b.X, b.Y, x, y, v.X, v.Y)
		if math.IsNaN(ua) || math.IsNaN(ub) || ua > total || ub > total {
			return -1
		}
		return (total - math.Max(ua, ub)) / (total / 2)
	})
}

// mouseRightAngle clicks a point that makes a right angle at the blue
// dot with the black one. The page scores (90 − |90 − angle|)/90, from
// the circles' boxes: the click's circle is 3 px, the dots 3.5, so the
// click counts as half a pixel right of and below where it is.
func mouseRightAngle(ctx context.Context, p *Play) error {
	vs, err := mouseGradedCircles(ctx, p, "#svg-grid #init-blue", 1)
	if err != nil {
		return err
	}
	as, err := mouseGradedCircles(ctx, p, "#svg-grid #init-black", 1)
	if err != nil {
		return err
	}
	v, a := vs[0], as[0]
	return mouseGradedClick(ctx, p, func(x, y float64) float64 {
		diff := math.Abs(90 - mouseAngle(a.X, a.Y, x+0.5, y+0.5, v.X, v.Y))
		if math.IsNaN(diff) || diff >= 45 {
			return -1
		}
		return (90 - diff) / 90
	})
}
