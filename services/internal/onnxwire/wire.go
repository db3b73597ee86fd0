package onnxwire

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers and enums of onnx.proto (ONNX IR version 8) that the writer
// and the reader use. onnx.proto is proto2, so repeated scalars are written
// unpacked; a reader accepts both encodings, as protobuf parsers must.
const (
	ModelIRVersion     = 1
	ModelProducerName  = 2
	ModelProducerVer   = 3
	ModelGraph         = 7
	ModelOpsetImport   = 8
	ModelMetadataProps = 14

	OpsetDomain  = 1
	OpsetVersion = 2

	GraphNode        = 1
	GraphName        = 2
	GraphInitializer = 5
	GraphInput       = 11
	GraphOutput      = 12

	NodeInput  = 1
	NodeOutput = 2
	NodeName   = 3
	NodeOpType = 4
	NodeAttr   = 5

	AttrName   = 1
	AttrFloat  = 2
	AttrInt    = 3
	AttrTensor = 5
	AttrInts   = 8
	AttrType   = 20

	AttrTypeFloat  = 1
	AttrTypeInt    = 2
	AttrTypeTensor = 4
	AttrTypeInts   = 7

	TensorDims      = 1
	TensorDataType  = 2
	TensorFloatData = 4
	TensorInt64Data = 7
	TensorName      = 8
	TensorRawData   = 9

	DTypeFloat = 1
	DTypeInt64 = 7

	ValueInfoName = 1
	ValueInfoType = 2
	TypeTensor    = 1
	TTElemType    = 1
	TTShape       = 2
	ShapeDim      = 1
	DimValue      = 1
	DimParam      = 2

	EntryKey   = 1
	EntryValue = 2

	IRVersion = 8
)

// AppendString, AppendBytes and AppendVarint append one field.
func AppendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func AppendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func AppendVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// FloatTensor encodes a float32 TensorProto with raw little-endian data.
func FloatTensor(name string, shape []int64, data []float32) []byte {
	var b []byte
	for _, d := range shape {
		b = AppendVarint(b, TensorDims, uint64(d))
	}
	b = AppendVarint(b, TensorDataType, DTypeFloat)
	if name != "" {
		b = AppendString(b, TensorName, name)
	}
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return AppendBytes(b, TensorRawData, raw)
}

// Int64Tensor encodes an int64 TensorProto with raw little-endian data.
func Int64Tensor(name string, shape []int64, data []int64) []byte {
	var b []byte
	for _, d := range shape {
		b = AppendVarint(b, TensorDims, uint64(d))
	}
	b = AppendVarint(b, TensorDataType, DTypeInt64)
	if name != "" {
		b = AppendString(b, TensorName, name)
	}
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	return AppendBytes(b, TensorRawData, raw)
}

// Dim is one dimension of a value's shape: a size, or a symbolic name.
type Dim struct {
	Value int64
	Param string
}

// Dims is sizes as Dims.
func Dims(sizes ...int64) []Dim {
	out := make([]Dim, len(sizes))
	for i, s := range sizes {
		out[i] = Dim{Value: s}
	}
	return out
}

// Sym is a symbolic dimension.
func Sym(name string) Dim { return Dim{Param: name} }

// ValueInfo encodes a ValueInfoProto of a tensor of dtype and shape.
func ValueInfo(name string, dtype int, shape ...Dim) []byte {
	var sh []byte
	for _, d := range shape {
		var db []byte
		if d.Param != "" {
			db = AppendString(db, DimParam, d.Param)
		} else {
			db = AppendVarint(db, DimValue, uint64(d.Value))
		}
		sh = AppendBytes(sh, ShapeDim, db)
	}
	var tt []byte
	tt = AppendVarint(tt, TTElemType, uint64(dtype))
	tt = AppendBytes(tt, TTShape, sh)
	typ := AppendBytes(nil, TypeTensor, tt)
	var b []byte
	b = AppendString(b, ValueInfoName, name)
	return AppendBytes(b, ValueInfoType, typ)
}

// IntAttr, IntsAttr, FloatAttr and TensorAttr encode node attributes.
func IntAttr(name string, v int64) []byte {
	var b []byte
	b = AppendString(b, AttrName, name)
	b = AppendVarint(b, AttrType, AttrTypeInt)
	return AppendVarint(b, AttrInt, uint64(v))
}

func IntsAttr(name string, vs ...int64) []byte {
	var b []byte
	b = AppendString(b, AttrName, name)
	b = AppendVarint(b, AttrType, AttrTypeInts)
	for _, v := range vs {
		b = AppendVarint(b, AttrInts, uint64(v))
	}
	return b
}

func FloatAttr(name string, v float32) []byte {
	var b []byte
	b = AppendString(b, AttrName, name)
	b = AppendVarint(b, AttrType, AttrTypeFloat)
	b = protowire.AppendTag(b, AttrFloat, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, math.Float32bits(v))
}

func TensorAttr(name string, tensor []byte) []byte {
	var b []byte
	b = AppendString(b, AttrName, name)
	b = AppendVarint(b, AttrType, AttrTypeTensor)
	return AppendBytes(b, AttrTensor, tensor)
}
