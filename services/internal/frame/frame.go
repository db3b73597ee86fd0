package frame

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"io"
)

// MaxWireSide bounds a wire frame's declared width and height: a hostile
// header must not make the featurizer allocate gigabytes. The actor's
// wire frames are at most 4096 pixels a side (actor.WithFrameMaxSide).
const MaxWireSide = 4096

// MaxScreenshotSide bounds a screenshot's declared sides. Chromium captures
// nothing larger (its largest texture is 16384 pixels a side), so the bound
// only stops a corrupt header.
const MaxScreenshotSide = 16384

// Decode decodes a PNG or JPEG image into RGBA pixels at the origin. format
// is "png", "jpeg" or "jpg", or empty, in which case the bytes' magic
// decides. The declared size is checked before any pixel is allocated:
// both sides must be 1..maxSide. The result may be the decoder's own image;
// callers only read it.
func Decode(b []byte, format string, maxSide int) (*image.RGBA, error) {
	var decode func(io.Reader) (image.Image, error)
	var config func(io.Reader) (image.Config, error)
	switch {
	case format == "png" || (format == "" && bytes.HasPrefix(b, []byte("\x89PNG"))):
		decode = png.Decode
		config = png.DecodeConfig
	case format == "jpeg" || format == "jpg" || (format == "" && bytes.HasPrefix(b, []byte{0xff, 0xd8})):
		decode = func(r io.Reader) (image.Image, error) { return jpeg.Decode(r) }
		config = jpeg.DecodeConfig
	default:
		return nil, fmt.Errorf("unable to decode frame: unknown format %q", format)
	}
	c, err := config(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("unable to decode %s frame: %w", format, err)
	}
	if c.Width <= 0 || c.Height <= 0 || c.Width > maxSide || c.Height > maxSide {
		return nil, fmt.Errorf("unable to use a frame of %dx%d: sides must be 1..%d", c.Width, c.Height, maxSide)
	}
	img, err := decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("unable to decode %s frame: %w", format, err)
	}
	if img.Bounds().Empty() {
		return nil, fmt.Errorf("unable to use an empty %s frame", format)
	}
	return toRGBA(img), nil
}

// toRGBA returns img as RGBA pixels at the origin: img itself when it is
// that already (a PNG without alpha decodes so), else a converted copy.
func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok && r.Rect.Min == (image.Point{}) {
		return r
	}
	b := img.Bounds()
	r := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(r, r.Rect, img, b.Min, draw.Src)
	return r
}

// Encode compresses img as a wire frame: "png" (fastest compression) or
// JPEG of quality (any other format).
func Encode(img *image.RGBA, format string, quality int) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		err = enc.Encode(&buf, img)
	default:
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality})
	}
	if err != nil {
		return nil, fmt.Errorf("unable to encode a frame: %w", err)
	}
	return buf.Bytes(), nil
}
