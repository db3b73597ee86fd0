package frame

import "image"

// Fit returns (w, h) scaled so that the longer side is at most maxSide,
// keeping the aspect ratio (rounded, at least 1); sizes are never scaled up.
func Fit(w, h, maxSide int) (int, int) {
	long := max(w, h)
	if long <= maxSide || long == 0 {
		return w, h
	}
	tw := (w*maxSide + long/2) / long
	th := (h*maxSide + long/2) / long
	return max(tw, 1), max(th, 1)
}

// Resize area-averages src into a w×h image (the wire frame): each pixel
// is the mean of the source pixels its cell covers, truncated, alpha
// included. Averaging keeps thin text and borders visible at low resolution.
func Resize(src *image.RGBA, w, h int) *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	areaCells(src, w, h, func(x, y int, s [4]uint64, n uint64) {
		o := dst.Pix[y*dst.Stride+4*x:]
		o[0], o[1], o[2], o[3] = uint8(s[0]/n), uint8(s[1]/n), uint8(s[2]/n), uint8(s[3]/n)
	})
	return dst
}

// Thumbnail area-averages src into dst, the network's h×w model input laid
// out [3][h][w] (R, G, B planes) with values pixel/255 − 0.5. len(dst) must
// be at least 3·h·w.
func Thumbnail(src *image.RGBA, h, w int, dst []float32) {
	areaCells(src, w, h, func(x, y int, s [4]uint64, n uint64) {
		// The sums are exact in float64 (below 2^53).
		fn := float64(n)
		for c := range 3 {
			dst[c*h*w+y*w+x] = float32(float64(s[c])/fn/255 - 0.5)
		}
	})
}

// areaCells tiles src (at the origin, as Decode's images are) with a w×h
// grid and calls put, row by row, with each cell's per-channel sums (R, G,
// B, A) and its pixel count. Cell i of n covers source pixels
// [i·src/n, (i+1)·src/n), at least one, so any size maps deterministically.
func areaCells(src *image.RGBA, w, h int, put func(x, y int, sums [4]uint64, n uint64)) {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	for oy := range h {
		y0, y1 := cellRange(oy, h, sh)
		for ox := range w {
			x0, x1 := cellRange(ox, w, sw)
			var s [4]uint64
			for y := y0; y < y1; y++ {
				row := src.Pix[y*src.Stride+4*x0 : y*src.Stride+4*x1]
				for i := 0; i < len(row); i += 4 {
					s[0] += uint64(row[i])
					s[1] += uint64(row[i+1])
					s[2] += uint64(row[i+2])
					s[3] += uint64(row[i+3])
				}
			}
			put(ox, oy, s, uint64((y1-y0)*(x1-x0)))
		}
	}
}

// cellRange returns the source pixels [lo, hi) of output cell i of n over a
// source of size src (at least 1); never empty.
func cellRange(i, n, src int) (int, int) {
	lo := i * src / n
	hi := (i + 1) * src / n
	if hi <= lo {
		hi = lo + 1
	}
	if hi > src {
		hi, lo = src, max(0, src-1)
	}
	return lo, hi
}
