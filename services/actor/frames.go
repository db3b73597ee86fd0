package actor

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"io/fs"
	"os"
	"path/filepath"

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
