package actor

import (
	"image"

	"github.com/asyncwebrl/asyncwebrl/services/internal/frame"
)

// frameEncoder turns the env's screenshot into the wire frame that rides
// inline in an observation (services/internal/frame names the sizes).
type frameEncoder struct {
	maxSide int
	format  string // "jpeg" or "png"
	quality int
}

// wireFrame is an encoded wire frame.
type wireFrame struct {
	data          []byte
	width, height int
	// scale converts CSS pixels to wire-frame pixels.
	scaleX, scaleY float64
}

// encode scales the screenshot (PNG or JPEG of the viewport, vw x vh CSS
// pixels) so that its longer side is at most maxSide, never up, and
// compresses it. pixels is the screenshot decoded when the settler decoded
// it (env.Observation.ScreenshotPixels), nil otherwise.
func (fe frameEncoder) encode(shot []byte, pixels *image.RGBA, vw, vh int) (wireFrame, error) {
	rgba := pixels
	if rgba == nil {
		var err error
		if rgba, err = decodeScreenshot(shot); err != nil {
			return wireFrame{}, err
		}
	}
	w, h := rgba.Rect.Dx(), rgba.Rect.Dy()
	tw, th := frame.Fit(w, h, fe.maxSide)
	if tw != w || th != h {
		rgba = frame.Resize(rgba, tw, th)
	}
	data, err := frame.Encode(rgba, fe.format, fe.quality)
	if err != nil {
		return wireFrame{}, err
	}
	f := wireFrame{data: data, width: tw, height: th, scaleX: 1, scaleY: 1}
	if vw > 0 && vh > 0 {
		f.scaleX, f.scaleY = float64(tw)/float64(vw), float64(th)/float64(vh)
	}
	return f, nil
}
