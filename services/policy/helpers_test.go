package policy

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// pngFrame draws a w×h white frame with the given boxes filled.
func pngFrame(t testing.TB, w, h int, fills map[image.Rectangle]color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for r, c := range fills {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				img.SetRGBA(x, y, c)
			}
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func box(x, y, w, h float32) *eventspb.Box { return &eventspb.Box{X: x, Y: y, W: w, H: h} }

// clickButtonObs is a MiniWoB-style "click the button" page, 160x210.
func clickButtonObs(t testing.TB) *eventspb.Observation {
	red := color.RGBA{R: 255, A: 255}
	return &eventspb.Observation{
		Instruction: `Click on the "Yes" button.`,
		Width:       160, Height: 210,
		Frame:       pngFrame(t, 160, 210, map[image.Rectangle]color.RGBA{image.Rect(60, 60, 100, 80): red}),
		FrameFormat: "png",
		Elements: []*eventspb.Element{
			{Bid: "11", Role: "button", Text: "No", Box: box(10, 60, 40, 20)},
			{Bid: "12", Role: "button", Text: "Yes", Box: box(60, 60, 40, 20)},
			{Bid: "13", Role: "button", Text: "Maybe later", Box: box(110, 60, 40, 20)},
		},
	}
}

// typeTextObs is a "type the text and submit" page without a frame.
func typeTextObs() *eventspb.Observation {
	return &eventspb.Observation{
		Instruction: `Type "blue fox" into the text box and press Submit.`,
		Width:       160, Height: 210,
		Elements: []*eventspb.Element{
			{Bid: "a1", Role: "textbox", Text: "", Box: box(10, 60, 120, 20)},
			{Bid: "a2", Role: "button", Text: "Submit", Box: box(10, 90, 50, 20)},
		},
	}
}

// testModel writes a model of arch with the given seed.
func testModel(t testing.TB, a Architecture, seed uint64) []byte {
	t.Helper()
	b, err := WriteONNX(a, a.NewParams(seed))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// smallArch keeps tests and the race detector quick.
func smallArch() Architecture {
	a := DefaultArchitecture()
	a.FrameHeight, a.FrameWidth = 16, 16
	a.MaxElements, a.MaxCandidates = 8, 6+len(PressKeys)
	a.Normalize()
	return a
}
