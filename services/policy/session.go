package policy

import (
	"errors"
	"fmt"

	ort "github.com/yalue/onnxruntime_go"
)

// Session is one loaded model in ONNX Runtime. Run may be called from one
// goroutine at a time; Server serialises its runs.
type Session struct {
	arch Architecture
	sess *ort.DynamicAdvancedSession
}

// NewSession loads ONNX bytes written by WriteONNX (e.g. Weights.onnx).
// Options used: WithIntraOpThreads.
func NewSession(onnx []byte, opts ...Option) (*Session, error) {
	o := buildOptions(opts)
	return newSession(onnx, o)
}

func newSession(onnx []byte, o options) (*Session, error) {
	arch, err := ReadArchitecture(onnx)
	if err != nil {
		return nil, err
	}
	if err := initRuntime(o.libraryPath); err != nil {
		return nil, err
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("unable to create session options: %w", err)
	}
	defer so.Destroy()
	if err := so.SetIntraOpNumThreads(o.intraOpThreads); err != nil {
		return nil, fmt.Errorf("unable to set intra-op threads: %w", err)
	}
	if err := so.SetInterOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("unable to set inter-op threads: %w", err)
	}
	var inNames, outNames []string
	for _, s := range arch.InputSpecs() {
		inNames = append(inNames, s.Name)
	}
	for _, s := range arch.OutputSpecs() {
		outNames = append(outNames, s.Name)
	}
	sess, err := ort.NewDynamicAdvancedSessionWithONNXData(onnx, inNames, outNames, so)
	if err != nil {
		return nil, fmt.Errorf("unable to load the policy into ONNX Runtime: %w", err)
	}
	return &Session{arch: arch, sess: sess}, nil
}

// Arch returns the architecture the model was written with.
func (s *Session) Arch() Architecture { return s.arch }

// Run computes the outputs of a batch.
func (s *Session) Run(b *Batch) (*Outputs, error) {
	if b == nil || b.Size <= 0 {
		return nil, errors.New("unable to run an empty batch")
	}
	specs := s.arch.InputSpecs()
	if len(b.Inputs) != len(specs) {
		return nil, fmt.Errorf("unable to run: batch has %d inputs, want %d", len(b.Inputs), len(specs))
	}
	inputs := make([]ort.Value, 0, len(specs))
	defer func() {
		for _, v := range inputs {
			v.Destroy()
		}
	}()
	for i, spec := range specs {
		in := b.Inputs[i]
		want := int64(b.Size)
		for _, d := range spec.Shape {
			want *= d
		}
		var v ort.Value
		var err error
		switch {
		case in.Name != spec.Name:
			return nil, fmt.Errorf("unable to run: input %d is %q, want %q", i, in.Name, spec.Name)
		case spec.DType == "int64" && int64(len(in.I64)) == want:
			v, err = ort.NewTensor(ort.NewShape(in.Shape...), in.I64)
		case spec.DType == "float32" && int64(len(in.F32)) == want:
			v, err = ort.NewTensor(ort.NewShape(in.Shape...), in.F32)
		default:
			return nil, fmt.Errorf("unable to run: input %q has the wrong size for %d samples", spec.Name, b.Size)
		}
		if err != nil {
			return nil, fmt.Errorf("unable to create input %q: %w", spec.Name, err)
		}
		inputs = append(inputs, v)
	}
	B := int64(b.Size)
	outSpecs := s.arch.OutputSpecs()
	outs := make([]*ort.Tensor[float32], 0, len(outSpecs))
	defer func() {
		for _, v := range outs {
			v.Destroy()
		}
	}()
	for _, spec := range outSpecs {
		t, err := ort.NewEmptyTensor[float32](ort.NewShape(append([]int64{B}, spec.Shape...)...))
		if err != nil {
			return nil, fmt.Errorf("unable to create output %q: %w", spec.Name, err)
		}
		outs = append(outs, t)
	}
	outVals := make([]ort.Value, len(outs))
	for i, t := range outs {
		outVals[i] = t
	}
	if err := s.sess.Run(inputs, outVals); err != nil {
		return nil, fmt.Errorf("unable to run the policy: %w", err)
	}
	copyOut := func(t *ort.Tensor[float32]) []float32 {
		return append([]float32(nil), t.GetData()...)
	}
	return &Outputs{
		Size:         b.Size,
		TypeLogits:   copyOut(outs[0]),
		ElemLogits:   copyOut(outs[1]),
		CandLogits:   copyOut(outs[2]),
		Value:        copyOut(outs[3]),
		PointLogits:  copyOut(outs[4]),
		PointOffsets: copyOut(outs[5]),
	}, nil
}

// Close releases the session.
func (s *Session) Close() error {
	if s.sess == nil {
		return nil
	}
	err := s.sess.Destroy()
	s.sess = nil
	if err != nil {
		return fmt.Errorf("unable to destroy session: %w", err)
	}
	return nil
}
