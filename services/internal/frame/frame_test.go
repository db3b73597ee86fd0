package frame

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// testImage is a w×h image of seeded noise with a few solid bars (edges
// for the averages to blur); alpha 255 unless translucent.
func testImage(w, h int, seed uint64, translucent bool) *image.RGBA {
	rng := rand.New(rand.NewPCG(seed, 7))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()), 255
		if translucent {
			a := byte(rng.Uint32())
			for c := range 3 {
				img.Pix[i+c] = byte(uint32(img.Pix[i+c]) * uint32(a) / 255) // premultiplied
			}
			img.Pix[i+3] = a
		}
	}
	draw.Draw(img, image.Rect(w/3, 0, w/3+2, h), image.NewUniform(color.RGBA{20, 30, 200, 255}), image.Point{}, draw.Src)
	return img
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngHeader is a PNG signature and a valid IHDR chunk declaring w×h, and
// no pixel data.
func pngHeader(w, h uint32) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

// jpegSized is a real JPEG whose SOF header is patched to declare w×h.
func jpegSized(t *testing.T, w, h uint16) []byte {
	b := encodeJPEG(t, testImage(8, 8, 1, false))
	for i := 2; i+9 < len(b); {
		if b[i] != 0xff {
			t.Fatal("lost in the JPEG markers")
		}
		if m := b[i+1]; m == 0xc0 || m == 0xc1 || m == 0xc2 {
			binary.BigEndian.PutUint16(b[i+5:], h)
			binary.BigEndian.PutUint16(b[i+7:], w)
			return b
		}
		i += 2 + int(binary.BigEndian.Uint16(b[i+2:]))
	}
	t.Fatal("no SOF marker")
	return nil
}

func TestDecodeSizeGuard(t *testing.T) {
	for name, c := range map[string]struct {
		b       []byte
		format  string
		maxSide int
		want    string
	}{
		"png wider than the bound":      {pngHeader(MaxWireSide+1, 10), "png", MaxWireSide, "sides must be 1..4096"},
		"png of 100000x100000":          {pngHeader(100000, 100000), "", MaxScreenshotSide, "100000x100000: sides must be 1..16384"},
		"jpeg taller than the bound":    {jpegSized(t, 8, MaxWireSide+1), "jpeg", MaxWireSide, "8x4097: sides must be 1..4096"},
		"jpeg of 65535x65535":           {jpegSized(t, 65535, 65535), "", MaxScreenshotSide, "65535x65535: sides must be"},
		"png of zero width":             {pngHeader(0, 10), "png", MaxWireSide, "unable to"},
		"png above a caller's own side": {encodePNG(t, testImage(40, 30, 1, false)), "png", 32, "40x30: sides must be 1..32"},
	} {
		// The guard comes before the pixels: rejecting a 100000x100000
		// header allocates nothing like its 40 GB.
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Decode(c.b, c.format, c.maxSide)
		runtime.ReadMemStats(&after)
		allocs := after.TotalAlloc - before.TotalAlloc
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want %q in it", name, err, c.want)
		}
		if allocs > 1<<20 {
			t.Errorf("%s: rejecting allocated %d bytes", name, allocs)
		}
	}
	// At the bound it decodes.
	img, err := Decode(encodePNG(t, testImage(40, 30, 1, false)), "png", 40)
	if err != nil || img.Rect != image.Rect(0, 0, 40, 30) {
		t.Fatalf("a 40x30 frame at a bound of 40: %v, %v", img.Bounds(), err)
	}
}

func TestDecodeGarbage(t *testing.T) {
	for _, c := range []struct {
		b            []byte
		format, want string
	}{
		{[]byte("not a png"), "png", "unable to decode png frame: png: invalid format"},
		{[]byte("not an image"), "", `unable to decode frame: unknown format ""`},
		{[]byte("GIF89a...."), "gif", `unable to decode frame: unknown format "gif"`},
		{[]byte{0xff, 0xd8, 0xff, 0x00}, "", "unable to decode  frame"}, // JPEG magic, then nothing
		{pngHeader(10, 10), "png", "unable to decode png frame"},        // a header without pixels
		{nil, "jpeg", "unable to decode jpeg frame"},
	} {
		img, err := Decode(c.b, c.format, MaxWireSide)
		if err == nil || img != nil {
			t.Errorf("%q as %q: decoded %v", c.b, c.format, img)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q as %q: error %q, want it to start %q", c.b, c.format, err, c.want)
		}
	}
}

func TestDecodeFormats(t *testing.T) {
	src := testImage(33, 17, 2, false)
	for _, c := range []struct {
		b      []byte
		format string
	}{{encodePNG(t, src), "png"}, {encodePNG(t, src), ""}, {encodeJPEG(t, src), "jpeg"}, {encodeJPEG(t, src), "jpg"}, {encodeJPEG(t, src), ""}} {
		img, err := Decode(c.b, c.format, MaxWireSide)
		if err != nil {
			t.Fatalf("%q: %v", c.format, err)
		}
		if img.Rect != src.Rect {
			t.Fatalf("%q: %v, want %v", c.format, img.Rect, src.Rect)
		}
	}
	// Encode's PNG of an opaque image comes back exactly.
	b, err := Encode(src, "png", 0)
	if err != nil {
		t.Fatal(err)
	}
	img, err := Decode(b, "png", MaxWireSide)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(img.Pix, src.Pix) || img.Stride != src.Stride {
		t.Fatal("an opaque PNG did not come back exactly")
	}
	if b, err := Encode(src, "jpeg", 80); err != nil || !bytes.HasPrefix(b, []byte{0xff, 0xd8}) {
		t.Fatalf("Encode as JPEG: %v", err)
	}
}

func TestFit(t *testing.T) {
	for _, c := range []struct{ w, h, max, tw, th int }{
		{160, 210, 128, 98, 128},
		{400, 520, 128, 98, 128},
		{100, 50, 128, 100, 50}, // never up
		{300, 300, 64, 64, 64},
		{1000, 1, 10, 10, 1},
	} {
		if tw, th := Fit(c.w, c.h, c.max); tw != c.tw || th != c.th {
			t.Errorf("Fit(%d, %d, %d) = %d, %d; want %d, %d", c.w, c.h, c.max, tw, th, c.tw, c.th)
		}
	}
}

func TestResizeAverages(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 4, 2))
	// Left half black, right half white: each 2x2 cell is uniform.
	for y := range 2 {
		for x := range 4 {
			v := uint8(0)
			if x >= 2 {
				v = 255
			}
			i := src.PixOffset(x, y)
			src.Pix[i], src.Pix[i+1], src.Pix[i+2], src.Pix[i+3] = v, v, v, 255
		}
	}
	if dst := Resize(src, 2, 1); dst.Pix[0] != 0 || dst.Pix[4] != 255 {
		t.Fatalf("cells %v, want black then white", dst.Pix)
	}
	if half := Resize(src, 1, 1); half.Pix[0] != 127 {
		t.Fatalf("one cell over half black half white = %d, want 127", half.Pix[0])
	}
	th := make([]float32, 3*1*2)
	Thumbnail(src, 1, 2, th)
	if th[0] != -0.5 || th[1] != 0.5 || th[2] != -0.5 || th[5] != 0.5 {
		t.Fatalf("thumbnail %v, want -0.5 then 0.5 per plane", th)
	}
}

// The sizes the resizes meet: screenshots of MiniWoB++ (160x210) and of
// the built-in sites (400x520) to the 128-pixel wire frame, wire frames to
// the 32x32 thumbnail, and odd ones (up, 1 pixel, primes).
var resizeCases = []struct{ sw, sh, w, h int }{
	{160, 210, 98, 128}, {400, 520, 98, 128}, {98, 128, 32, 32}, {128, 98, 32, 32},
	{7, 5, 32, 32}, {1, 1, 3, 2}, {97, 89, 13, 31}, {64, 64, 64, 64}, {33, 1, 32, 32},
}

// TestResizeMatchesOldCode: Resize is the actor's old resizeArea and
// Thumbnail the featurizer's old resizeFrame, bit for bit.
func TestResizeMatchesOldCode(t *testing.T) {
	for i, c := range resizeCases {
		for _, translucent := range []bool{false, true} {
			src := testImage(c.sw, c.sh, uint64(i), translucent)
			if got, want := Resize(src, c.w, c.h), oldResizeArea(src, c.w, c.h); !bytes.Equal(got.Pix, want.Pix) || got.Rect != want.Rect {
				t.Errorf("%dx%d to %dx%d: Resize differs from the actor's old resizeArea", c.sw, c.sh, c.w, c.h)
			}
			got, want := make([]float32, 3*c.w*c.h), make([]float32, 3*c.w*c.h)
			Thumbnail(src, c.h, c.w, got)
			oldResizeFrame(src, c.h, c.w, want)
			for j := range got {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("%dx%d to %dx%d: Thumbnail[%d] = %v, the featurizer's old resizeFrame %v", c.sw, c.sh, c.w, c.h, j, got[j], want[j])
				}
			}
		}
	}
}

// oldResizeArea is services/actor's resizeArea before this package, kept
// as the reference Resize must match.
func oldResizeArea(src *image.RGBA, tw, th int) *image.RGBA {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	dst := image.NewRGBA(image.Rect(0, 0, tw, th))
	for ty := 0; ty < th; ty++ {
		y0, y1 := ty*sh/th, (ty+1)*sh/th
		if y1 <= y0 {
			y1 = y0 + 1
		}
		for tx := 0; tx < tw; tx++ {
			x0, x1 := tx*sw/tw, (tx+1)*sw/tw
			if x1 <= x0 {
				x1 = x0 + 1
			}
			var r, g, b, a, n uint32
			for y := y0; y < y1; y++ {
				row := src.Pix[y*src.Stride:]
				for x := x0; x < x1; x++ {
					p := row[4*x : 4*x+4]
					r += uint32(p[0])
					g += uint32(p[1])
					b += uint32(p[2])
					a += uint32(p[3])
					n++
				}
			}
			o := dst.Pix[ty*dst.Stride+4*tx:]
			o[0], o[1], o[2], o[3] = uint8(r/n), uint8(g/n), uint8(b/n), uint8(a/n)
		}
	}
	return dst
}

// oldResizeFrame is services/policy's resizeFrame before this package, kept
// as the reference Thumbnail must match.
func oldResizeFrame(img *image.RGBA, h, w int, dst []float32) {
	sw, sh := img.Rect.Dx(), img.Rect.Dy()
	for oy := range h {
		y0, y1 := oldCellRange(oy, h, sh)
		for ox := range w {
			x0, x1 := oldCellRange(ox, w, sw)
			var s [3]float64
			for y := y0; y < y1; y++ {
				row := img.Pix[y*img.Stride:]
				for x := x0; x < x1; x++ {
					p := row[4*x:]
					s[0] += float64(p[0])
					s[1] += float64(p[1])
					s[2] += float64(p[2])
				}
			}
			n := float64((y1 - y0) * (x1 - x0))
			for c := range 3 {
				dst[c*h*w+oy*w+ox] = float32(s[c]/n/255 - 0.5)
			}
		}
	}
}

func oldCellRange(i, n, src int) (int, int) {
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

// FuzzDecode: no input panics or gets past the size guard, and whatever
// decodes is a non-empty RGBA image at the origin whose thumbnail is
// finite.
func FuzzDecode(f *testing.F) {
	src := testImage(20, 12, 4, false)
	f.Add(encodePNG(f, src), "png", 64)
	f.Add(encodePNG(f, testImage(5, 9, 5, true)), "", 64)
	f.Add(encodeJPEG(f, src), "jpeg", 64)
	f.Add(encodeJPEG(f, src), "", 16)
	f.Add(pngHeader(1<<30, 1<<30), "png", MaxScreenshotSide)
	f.Add([]byte("not a frame"), "", 64)
	f.Fuzz(func(t *testing.T, b []byte, format string, maxSide int) {
		maxSide = 1 + int(uint(maxSide)%512) // small: a fuzzer must not decode gigapixels
		img, err := Decode(b, format, maxSide)
		if err != nil {
			if img != nil || !strings.HasPrefix(err.Error(), "unable to") {
				t.Fatalf("error %q with image %v", err, img)
			}
			return
		}
		r := img.Rect
		if r.Min != (image.Point{}) || r.Empty() || r.Dx() > maxSide || r.Dy() > maxSide || len(img.Pix) < img.Stride*(r.Dy()-1)+4*r.Dx() {
			t.Fatalf("decoded %v (stride %d, %d bytes) with sides bound %d", r, img.Stride, len(img.Pix), maxSide)
		}
		th := make([]float32, 3*4*4)
		Thumbnail(img, 4, 4, th)
		for _, v := range th {
			if v < -0.5 || v > 0.5 || v != v {
				t.Fatalf("thumbnail value %v", v)
			}
		}
	})
}

// BenchmarkResize is the wire frame of a built-in site's screenshot and the
// thumbnail of a wire frame.
func BenchmarkResize(b *testing.B) {
	shot, wire := testImage(400, 520, 1, false), testImage(98, 128, 2, false)
	th := make([]float32, 3*32*32)
	b.Run("wire", func(b *testing.B) {
		for b.Loop() {
			Resize(shot, 98, 128)
		}
	})
	b.Run("thumbnail", func(b *testing.B) {
		for b.Loop() {
			Thumbnail(wire, 32, 32, th)
		}
	})
}
