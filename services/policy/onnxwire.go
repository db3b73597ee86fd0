package policy

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers and enums of onnx.proto (ONNX IR version 8) that the writer
// and the reader use. onnx.proto is proto2, so repeated scalars are written
// unpacked; the reader accepts both encodings, as protobuf parsers must.
const (
	modelIRVersion     = 1
	modelProducerName  = 2
	modelProducerVer   = 3
	modelGraph         = 7
	modelOpsetImport   = 8
	modelMetadataProps = 14

	opsetDomain  = 1
	opsetVersion = 2

	graphNode        = 1
	graphName        = 2
	graphInitializer = 5
	graphInput       = 11
	graphOutput      = 12

	nodeInput  = 1
	nodeOutput = 2
	nodeName   = 3
	nodeOpType = 4
	nodeAttr   = 5

	attrName   = 1
	attrFloat  = 2
	attrInt    = 3
	attrTensor = 5
	attrInts   = 8
	attrType   = 20

	attrTypeFloat  = 1
	attrTypeInt    = 2
	attrTypeTensor = 4
	attrTypeInts   = 7

	tensorDims      = 1
	tensorDataType  = 2
	tensorFloatData = 4
	tensorInt64Data = 7
	tensorName      = 8
	tensorRawData   = 9

	dtypeFloat = 1
	dtypeInt64 = 7

	valueInfoName = 1
	valueInfoType = 2
	typeTensor    = 1
	ttElemType    = 1
	ttShape       = 2
	shapeDim      = 1
	dimValue      = 1
	dimParam      = 2

	entryKey   = 1
	entryValue = 2

	irVersion = 8
)

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// floatTensorProto encodes a float32 TensorProto with raw little-endian data.
func floatTensorProto(name string, shape []int64, data []float32) []byte {
	var b []byte
	for _, d := range shape {
		b = appendVarint(b, tensorDims, uint64(d))
	}
	b = appendVarint(b, tensorDataType, dtypeFloat)
	if name != "" {
		b = appendString(b, tensorName, name)
	}
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return appendBytes(b, tensorRawData, raw)
}

// int64TensorProto encodes an int64 TensorProto with raw little-endian data.
func int64TensorProto(shape []int64, data []int64) []byte {
	var b []byte
	for _, d := range shape {
		b = appendVarint(b, tensorDims, uint64(d))
	}
	b = appendVarint(b, tensorDataType, dtypeInt64)
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	return appendBytes(b, tensorRawData, raw)
}

// valueInfo encodes a ValueInfoProto of a tensor whose first dimension is
// the symbolic "batch".
func valueInfo(name string, dtype int, shape []int64) []byte {
	var sh []byte
	var d []byte
	d = appendString(d, dimParam, "batch")
	sh = appendBytes(sh, shapeDim, d)
	for _, v := range shape {
		d = appendVarint(nil, dimValue, uint64(v))
		sh = appendBytes(sh, shapeDim, d)
	}
	var tt []byte
	tt = appendVarint(tt, ttElemType, uint64(dtype))
	tt = appendBytes(tt, ttShape, sh)
	typ := appendBytes(nil, typeTensor, tt)
	var b []byte
	b = appendString(b, valueInfoName, name)
	return appendBytes(b, valueInfoType, typ)
}

// attribute encoders.

func intAttr(name string, v int64) []byte {
	var b []byte
	b = appendString(b, attrName, name)
	b = appendVarint(b, attrType, attrTypeInt)
	return appendVarint(b, attrInt, uint64(v))
}

func intsAttr(name string, vs ...int64) []byte {
	var b []byte
	b = appendString(b, attrName, name)
	b = appendVarint(b, attrType, attrTypeInts)
	for _, v := range vs {
		b = appendVarint(b, attrInts, uint64(v))
	}
	return b
}

func tensorAttr(name string, tensor []byte) []byte {
	var b []byte
	b = appendString(b, attrName, name)
	b = appendVarint(b, attrType, attrTypeTensor)
	return appendBytes(b, attrTensor, tensor)
}
