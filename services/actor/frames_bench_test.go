package actor

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// pageShot is a 400x520 screenshot of a built-in site's page: white, a
// header bar, rows of "text" and a button; x moves a 4x4 spinner.
func pageShot(b testing.TB, x int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 400, 520))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	fill := func(r image.Rectangle, c color.RGBA) {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				img.SetRGBA(x, y, c)
			}
		}
	}
	fill(image.Rect(0, 0, 400, 40), color.RGBA{40, 60, 120, 255})
	for row := range 20 {
		for w := range 12 {
			if (row*7+w*3)%5 != 0 {
				fill(image.Rect(20+w*30, 60+row*20, 20+w*30+24, 60+row*20+8), color.RGBA{30, 30, 30, 255})
			}
		}
	}
	fill(image.Rect(150, 470, 250, 500), color.RGBA{30, 120, 200, 255})
	fill(image.Rect(x, 450, x+4, 454), color.RGBA{200, 20, 20, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkStableStepFrames is the pixel work of one stable step on a page
// the settler compares by a pair of screenshots: the pair's difference, the
// wire frame's encoding, the featurizer's thumbnail (and the rest of
// Featurize, the same before and after).
func BenchmarkStableStepFrames(b *testing.B) {
	prev, cur := pageShot(b, 10), pageShot(b, 11) // they differ: both are decoded
	arch := policy.DefaultArchitecture()
	enc := frameEncoder{maxSide: 128, format: "jpeg", quality: 80}
	b.ReportAllocs()
	for b.Loop() {
		var prevImg *image.RGBA
		_, pixels, err := frameDiff(prev, &prevImg, cur)
		if err != nil {
			b.Fatal(err)
		}
		f, err := enc.encode(cur, pixels, 400, 520) // the settler's pixels (env.Settled.FramePixels)
		if err != nil {
			b.Fatal(err)
		}
		obs := &eventspb.Observation{Frame: f.data, FrameFormat: "jpeg", Width: uint32(f.width), Height: uint32(f.height), Instruction: "Click the button"}
		if _, err := arch.Featurize(obs); err != nil {
			b.Fatal(err)
		}
	}
}
