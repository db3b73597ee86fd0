package actor

import (
	"fmt"
	"image"

	"github.com/asyncwebrl/asyncwebrl/services/internal/casstore"
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

// frameStore is the content-addressed store of full-resolution
// screenshots (casstore): events carry the hash only (claim check).
type frameStore struct{ *casstore.Store }

func newFrameStore(dir string) (*frameStore, error) {
	s, err := casstore.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("unable to open the frame store: %w", err)
	}
	return &frameStore{s}, nil
}

// put stores b and returns its hex sha256.
func (s *frameStore) put(b []byte) (string, error) { return s.Put(b) }

// get reads a stored frame back by its hash.
func (s *frameStore) get(hash string) ([]byte, error) { return s.Get(hash) }
