package actor

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
)

// frameEncoder turns the env's full-resolution PNG screenshot into the
// model-resolution frame that rides inline in an observation.
type frameEncoder struct {
	maxSide int
	format  string // "jpeg" or "png"
	quality int
}

// frame is an encoded model-resolution frame.
type frame struct {
	data          []byte
	width, height int
	// scale converts CSS pixels to frame pixels.
	scaleX, scaleY float64
}

// encode scales the screenshot (PNG or JPEG of the viewport, vw x vh CSS
// pixels) so
// that its longer side is at most maxSide, never up, and compresses it.
func (fe frameEncoder) encode(shot []byte, vw, vh int) (frame, error) {
	src, _, err := image.Decode(bytes.NewReader(shot)) // PNG or JPEG
	if err != nil {
		return frame{}, fmt.Errorf("unable to decode a screenshot: %w", err)
	}
	rgba := toRGBA(src)
	w, h := rgba.Rect.Dx(), rgba.Rect.Dy()
	tw, th := fitSide(w, h, fe.maxSide)
	if tw != w || th != h {
		rgba = resizeArea(rgba, tw, th)
	}
	var buf bytes.Buffer
	switch fe.format {
	case "png":
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		err = enc.Encode(&buf, rgba)
	default:
		err = jpeg.Encode(&buf, rgba, &jpeg.Options{Quality: fe.quality})
	}
	if err != nil {
		return frame{}, fmt.Errorf("unable to encode a frame: %w", err)
	}
	f := frame{data: buf.Bytes(), width: tw, height: th, scaleX: 1, scaleY: 1}
	if vw > 0 && vh > 0 {
		f.scaleX, f.scaleY = float64(tw)/float64(vw), float64(th)/float64(vh)
	}
	return f, nil
}

// fitSide returns (w, h) scaled so that the longer side is at most max,
// keeping the aspect ratio; sizes are never scaled up.
func fitSide(w, h, max int) (int, int) {
	long := w
	if h > long {
		long = h
	}
	if long <= max || long == 0 {
		return w, h
	}
	tw := (w*max + long/2) / long
	th := (h*max + long/2) / long
	return maxInt(tw, 1), maxInt(th, 1)
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok && r.Rect.Min == (image.Point{}) {
		return r
	}
	b := img.Bounds()
	r := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(r, r.Rect, img, b.Min, draw.Src)
	return r
}

// resizeArea downsamples by area averaging: each target pixel is the mean of
// the source pixels its cell covers (whole pixels; the cells tile the
// source), which keeps thin text and borders visible at low resolution.
func resizeArea(src *image.RGBA, tw, th int) *image.RGBA {
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

// frameStore is the content-addressed store of full-resolution screenshots:
// <dir>/<hex sha256>. Events carry the hash only (claim check). Writes are
// atomic (temp file + rename), and a frame already there is not written
// again, so identical frames cost one file.
type frameStore struct{ dir string }

func newFrameStore(dir string) (*frameStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("unable to create the frame store %s: %w", dir, err)
	}
	return &frameStore{dir: dir}, nil
}

// put stores b and returns its hex sha256.
func (s *frameStore) put(b []byte) (string, error) {
	sum := sha256.Sum256(b)
	h := hex.EncodeToString(sum[:])
	path := filepath.Join(s.dir, h)
	if _, err := os.Stat(path); err == nil {
		return h, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("unable to check frame %s: %w", h, err)
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-"+h[:16]+"-*")
	if err != nil {
		return "", fmt.Errorf("unable to store frame %s: %w", h, err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("unable to store frame %s: %w", h, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("unable to store frame %s: %w", h, err)
	}
	return h, nil
}

// get reads a stored frame back by its hash.
func (s *frameStore) get(hash string) ([]byte, error) {
	if len(hash) != 64 {
		return nil, fmt.Errorf("unable to read frame %q: not a sha256", hash)
	}
	if _, err := hex.DecodeString(hash); err != nil {
		return nil, fmt.Errorf("unable to read frame %q: not a sha256", hash)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, hash))
	if err != nil {
		return nil, fmt.Errorf("unable to read frame %s: %w", hash, err)
	}
	return b, nil
}
