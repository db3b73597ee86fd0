package policy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/asyncwebrl/asyncwebrl/services/internal/onnxwire"
)

// Model is what ReadONNX recovers from an ONNX file: the architecture from
// the metadata and the parameters from the initializers.
type Model struct {
	Arch   Architecture
	Params Params
}

// ReadONNX extracts the architecture and the parameters of an ONNX model
// written by WriteONNX (the learner warm-starts from a published Weights
// message with it). It never panics on malformed input.
func ReadONNX(b []byte) (*Model, error) {
	graphBytes, arch, err := readModel(b)
	if err != nil {
		return nil, err
	}
	var params Params
	err = eachField(graphBytes, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if num != onnxwire.GraphInitializer || typ != protowire.BytesType {
			return nil
		}
		p, err := readFloatTensor(v)
		if err != nil {
			return err
		}
		params = append(params, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("unable to read ONNX initializers: %w", err)
	}
	ordered, err := arch.OrderParams(params)
	if err != nil {
		return nil, err
	}
	return &Model{Arch: arch, Params: ordered}, nil
}

// ReadArchitecture returns the architecture stored in an ONNX model's
// metadata, without decoding the parameters.
func ReadArchitecture(b []byte) (Architecture, error) {
	_, arch, err := readModel(b)
	return arch, err
}

// readModel returns the graph bytes and the validated architecture of an
// ONNX model.
func readModel(b []byte) ([]byte, Architecture, error) {
	var graphBytes []byte
	var archJSON string
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch {
		case num == onnxwire.ModelGraph && typ == protowire.BytesType:
			graphBytes = v
		case num == onnxwire.ModelMetadataProps && typ == protowire.BytesType:
			var key, val string
			if err := eachField(v, func(n protowire.Number, t protowire.Type, x []byte) error {
				if t == protowire.BytesType && n == onnxwire.EntryKey {
					key = string(x)
				} else if t == protowire.BytesType && n == onnxwire.EntryValue {
					val = string(x)
				}
				return nil
			}); err != nil {
				return err
			}
			if key == MetadataArchKey {
				archJSON = val
			}
		}
		return nil
	})
	if err != nil {
		return nil, Architecture{}, fmt.Errorf("unable to read ONNX model: %w", err)
	}
	if graphBytes == nil {
		return nil, Architecture{}, errors.New("unable to read ONNX model: no graph")
	}
	if archJSON == "" {
		return nil, Architecture{}, fmt.Errorf("unable to read ONNX model: no %q metadata", MetadataArchKey)
	}
	arch, err := ParseArchitecture(archJSON)
	if err != nil {
		return nil, Architecture{}, err
	}
	return graphBytes, arch, nil
}

// eachField calls fn for each top-level field of the message b; v holds a
// BytesType payload, or the raw field bytes for the other wire types.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		if typ == protowire.BytesType {
			var m int
			v, m = protowire.ConsumeBytes(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			n = m
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			v = b[:n]
		}
		if err := fn(num, typ, v); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// readFloatTensor decodes a float32 TensorProto held in raw_data or
// float_data (packed or not).
func readFloatTensor(b []byte) (Param, error) {
	var p Param
	dtype := uint64(0)
	var raw []byte
	hasRaw := false
	var floats []float32
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch num {
		case onnxwire.TensorDims:
			vals, err := varints(typ, v)
			if err != nil {
				return err
			}
			for _, d := range vals {
				p.Shape = append(p.Shape, int64(d))
			}
		case onnxwire.TensorDataType:
			vals, err := varints(typ, v)
			if err != nil || len(vals) != 1 {
				return fmt.Errorf("bad data_type: %v", err)
			}
			dtype = vals[0]
		case onnxwire.TensorName:
			if typ == protowire.BytesType {
				p.Name = string(v)
			}
		case onnxwire.TensorRawData:
			if typ == protowire.BytesType {
				raw, hasRaw = v, true
			}
		case onnxwire.TensorFloatData:
			switch typ {
			case protowire.BytesType:
				if len(v)%4 != 0 {
					return errors.New("bad packed float_data")
				}
				for i := 0; i < len(v); i += 4 {
					floats = append(floats, math.Float32frombits(binary.LittleEndian.Uint32(v[i:])))
				}
			case protowire.Fixed32Type:
				x, n := protowire.ConsumeFixed32(v)
				if n < 0 {
					return protowire.ParseError(n)
				}
				floats = append(floats, math.Float32frombits(x))
			}
		}
		return nil
	})
	if err != nil {
		return Param{}, err
	}
	if dtype != onnxwire.DTypeFloat {
		return Param{}, fmt.Errorf("initializer %q has data type %d, want float (1)", p.Name, dtype)
	}
	n := int64(1)
	for _, d := range p.Shape {
		if d < 0 || d > 1<<31 {
			return Param{}, fmt.Errorf("initializer %q has bad dimension %d", p.Name, d)
		}
		n *= d
		if n > 1<<31 {
			return Param{}, fmt.Errorf("initializer %q is too large", p.Name)
		}
	}
	if hasRaw {
		if int64(len(raw)) != 4*n {
			return Param{}, fmt.Errorf("initializer %q holds %d bytes for shape %v", p.Name, len(raw), p.Shape)
		}
		floats = make([]float32, n)
		for i := range floats {
			floats[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	} else if int64(len(floats)) != n {
		return Param{}, fmt.Errorf("initializer %q holds %d floats for shape %v", p.Name, len(floats), p.Shape)
	}
	p.Data = floats
	return p, nil
}

// varints decodes a repeated varint field occurrence, packed or not.
func varints(typ protowire.Type, v []byte) ([]uint64, error) {
	var out []uint64
	switch typ {
	case protowire.VarintType:
		x, n := protowire.ConsumeVarint(v)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		out = append(out, x)
	case protowire.BytesType:
		for len(v) > 0 {
			x, n := protowire.ConsumeVarint(v)
			if n < 0 {
				return nil, protowire.ParseError(n)
			}
			out = append(out, x)
			v = v[n:]
		}
	default:
		return nil, fmt.Errorf("unexpected wire type %d", typ)
	}
	return out, nil
}
