package learner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// checkpoint is what the learner keeps on disk after every publish: the
// ONNX model (which holds the architecture and every parameter, so it is
// also the training state) and the counters that continue the sequence.
// The optimiser's moments are not kept: Adam re-estimates them within a
// few dozen updates, and leaving them out keeps one format for serving and
// resuming.
type checkpoint struct {
	Policy   string    `json:"policy"`
	Version  uint64    `json:"version"`
	Updates  int64     `json:"updates"`
	Samples  int64     `json:"samples"`
	BCDone   bool      `json:"bc_done"`
	SavedAt  time.Time `json:"saved_at"`
	ONNXFile string    `json:"onnx_file"`
}

const checkpointFile = "checkpoint.json"

// modelFile names version v's model in a checkpoint directory.
func modelFile(v uint64) string { return fmt.Sprintf("model-v%06d.onnx", v) }

// CheckpointDir is where the learner of policy in the run with topic
// prefix prefix keeps its checkpoints under runDir.
func CheckpointDir(runDir, prefix, policy string) string {
	return filepath.Join(runDir, "learner", prefix+policy)
}

// CheckpointModel reads version v's model (a version's payload, as
// published) from checkpoint directory dir: the newest, or one kept by
// WithKeepCheckpoints. ok is false when dir does not hold it.
func CheckpointModel(dir string, v uint64) (model []byte, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, modelFile(v)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("unable to read checkpoint model: %w", err)
	}
	return b, true, nil
}

// saveCheckpoint writes the model, then the JSON that names it, each
// through a temporary file and a rename: a kill -9 at any moment leaves the
// previous checkpoint or the new one, never a torn file. The previous
// models are removed but every keepEvery-th version's (0: none): the
// weights topic is compacted to the newest version, so these are a run's
// history (a language model's end of cloning, to evaluate apart).
func saveCheckpoint(dir string, c checkpoint, onnx []byte, keepEvery uint64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("unable to create checkpoint directory: %w", err)
	}
	c.ONNXFile = modelFile(c.Version)
	if err := writeAtomic(filepath.Join(dir, c.ONNXFile), onnx); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("unable to encode checkpoint: %w", err)
	}
	if err := writeAtomic(filepath.Join(dir, checkpointFile), b); err != nil {
		return err
	}
	// Older models are no longer named by the checkpoint.
	old, _ := filepath.Glob(filepath.Join(dir, "model-v*.onnx"))
	for _, p := range old {
		var v uint64
		if _, err := fmt.Sscanf(filepath.Base(p), "model-v%d.onnx", &v); keepEvery > 0 && err == nil && v%keepEvery == 0 {
			continue
		}
		if filepath.Base(p) != c.ONNXFile {
			_ = os.Remove(p)
		}
	}
	return nil
}

// loadCheckpoint returns the checkpoint in dir and its model, or ok=false
// when there is none.
func loadCheckpoint(dir string) (c checkpoint, onnx []byte, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, checkpointFile))
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil, false, nil
	}
	if err != nil {
		return c, nil, false, fmt.Errorf("unable to read checkpoint: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, nil, false, fmt.Errorf("unable to decode checkpoint %s: %w", filepath.Join(dir, checkpointFile), err)
	}
	if onnx, err = os.ReadFile(filepath.Join(dir, filepath.Base(c.ONNXFile))); err != nil {
		return c, nil, false, fmt.Errorf("unable to read checkpoint model: %w", err)
	}
	return c, onnx, true, nil
}

func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("unable to write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("unable to write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("unable to write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("unable to write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("unable to write %s: %w", path, err)
	}
	return nil
}
