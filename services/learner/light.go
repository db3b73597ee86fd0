package learner

import (
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// lightTransition decodes a transition record without its observations'
// wire frames and elements, which are most of its bytes and most of the
// cost of decoding it: what the held-out and staleness filters read, so
// that they can drop a record before its full decode. ok is true only when
// the full decode (eventspb.DecodeTransition) of b certainly succeeds with
// the same fields: the rest is decoded by that same decoder, the frames are
// bytes, and every element must be well formed (shape.wellFormed, stricter
// than protobuf). Otherwise ok is false and the caller decodes b in full,
// so a malformed record is dead-lettered exactly as before.
func lightTransition(b []byte) (lt lightRecord, ok bool) {
	out := make([]byte, 0, 512)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return lightRecord{}, false
		}
		if (num == trObs || num == trNextObs) && typ == protowire.BytesType {
			obs, m := protowire.ConsumeBytes(b[n:])
			if m < 0 {
				return lightRecord{}, false
			}
			rest := &lt.obsRest
			if num == trNextObs {
				rest = &lt.nextRest
			}
			var light []byte
			if light, *rest, ok = lightObservation(obs, *rest); !ok {
				return lightRecord{}, false
			}
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendBytes(out, light)
			b = b[n+m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return lightRecord{}, false
		}
		out, b = append(out, b[:n+m]...), b[n+m:]
	}
	tr, err := eventspb.DecodeTransition(out)
	if err != nil {
		return lightRecord{}, false
	}
	lt.tr = tr
	return lt, true
}

// lightRecord is a light decode and what it left out: the frame and
// element fields of obs and next_obs (slices of the record, in order).
type lightRecord struct {
	tr                *eventspb.Transition
	obsRest, nextRest [][]byte
}

// full completes the light decode into what eventspb.DecodeTransition
// makes of the record: the fields left out merged back in their order
// (elements appended, the last frame kept, as a decoder does). false if
// that fails, which lightTransition's checks rule out.
func (lt lightRecord) full() (*eventspb.Transition, bool) {
	tr := lt.tr
	if !mergeFields(lt.obsRest, tr.GetObs()) || !mergeFields(lt.nextRest, tr.GetNextObs()) {
		return nil, false
	}
	return tr, true
}

// mergeFields decodes the fields (runs of an Observation's, with their
// tags) into obs, in their order.
func mergeFields(fields [][]byte, obs *eventspb.Observation) bool {
	if len(fields) > 0 && obs == nil {
		return false
	}
	for _, f := range fields {
		if (proto.UnmarshalOptions{Merge: true}).Unmarshal(f, obs) != nil {
			return false
		}
	}
	return true
}

// appendRun appends field, a slice of the record, to rest, extending the
// last run when field follows it in the record (an observation's elements
// are one run), so that a light decode keeps a few slices and copies no
// byte.
func appendRun(rest [][]byte, field []byte) [][]byte {
	if k := len(rest) - 1; k >= 0 {
		last := rest[k]
		if n := len(last); cap(last)-n >= len(field) && len(field) > 0 && &last[:n+1][n] == &field[0] {
			rest[k] = last[:n+len(field)]
			return rest
		}
	}
	return append(rest, field)
}

// Field numbers of asyncwebrl.v1.Transition and Observation that
// lightTransition strips (TestLightTransitionFieldNumbers checks them).
const (
	trObs       protowire.Number = 5
	trNextObs   protowire.Number = 8
	obsFrame    protowire.Number = 5
	obsElements protowire.Number = 20
)

// elementShape is asyncwebrl.v1.Element's field table.
var elementShape = shapeOf((&eventspb.Element{}).ProtoReflect().Descriptor(), 8)

// lightObservation copies an Observation's encoding without its frame and
// elements, whose fields it appends to rest; false when it is not well
// formed or an element is not.
func lightObservation(b []byte, rest [][]byte) ([]byte, [][]byte, bool) {
	out := make([]byte, 0, 256)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, nil, false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, nil, false
		}
		switch {
		case num == obsFrame && typ == protowire.BytesType:
			// Any bytes are a frame; the featurizer judges them later.
			rest = appendRun(rest, b[:n+m])
		case num == obsElements && typ == protowire.BytesType:
			if el, _ := protowire.ConsumeBytes(b[n:]); !elementShape.wellFormed(el) {
				return nil, nil, false
			}
			rest = appendRun(rest, b[:n+m])
		default:
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	return out, rest, true
}

// shape is a message's field table for wellFormed, by field number.
type shape struct {
	fields []fieldShape
	// refuse: a field number too large for the table; nothing is judged
	// well formed.
	refuse bool
}

type fieldShape struct {
	known bool
	// wire is the one wire type the field may come in; -1: none (a group,
	// a map, a message nested too deep).
	wire protowire.Type
	kind protoreflect.Kind
	enum protoreflect.EnumValueDescriptors // EnumKind
	msg  *shape                            // MessageKind
}

// shapeOf builds md's table, with those of the messages nested at most
// depth below it.
func shapeOf(md protoreflect.MessageDescriptor, depth int) *shape {
	fs := md.Fields()
	sh := &shape{}
	for i := range fs.Len() {
		fd := fs.Get(i)
		num := int(fd.Number())
		if num > 1024 {
			sh.refuse = true
			continue
		}
		for len(sh.fields) <= num {
			sh.fields = append(sh.fields, fieldShape{})
		}
		f := fieldShape{known: true, wire: -1, kind: fd.Kind()}
		if w, ok := wireType(fd.Kind()); ok {
			f.wire = w
		}
		switch {
		case fd.IsMap() || (fd.Kind() == protoreflect.MessageKind && depth <= 0):
			f.wire = -1
		case fd.Kind() == protoreflect.EnumKind:
			f.enum = fd.Enum().Values()
		case fd.Kind() == protoreflect.MessageKind:
			f.msg = shapeOf(fd.Message(), depth-1)
		}
		sh.fields[num] = f
	}
	return sh
}

// wellFormed reports whether b is an encoding of the message that protobuf
// decodes and eventspb.Validate accepts, judged strictly: every known field
// in its plain wire type (a packed or mistyped one is refused, though
// protobuf may take it), strings UTF-8, enums declared values, no groups.
// Refusing too much only costs a full decode.
func (sh *shape) wellFormed(b []byte) bool {
	if sh.refuse {
		return false
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return false
		}
		if int(num) < len(sh.fields) && sh.fields[num].known {
			f := &sh.fields[num]
			if typ != f.wire {
				return false
			}
			switch f.kind {
			case protoreflect.StringKind:
				if v, _ := protowire.ConsumeBytes(b); !utf8.Valid(v) {
					return false
				}
			case protoreflect.MessageKind:
				if v, _ := protowire.ConsumeBytes(b); !f.msg.wellFormed(v) {
					return false
				}
			case protoreflect.EnumKind:
				if v, _ := protowire.ConsumeVarint(b); f.enum.ByNumber(protoreflect.EnumNumber(int32(v))) == nil {
					return false
				}
			}
		}
		b = b[m:]
	}
	return true
}

// wireType is the plain wire type of a field kind; false for groups.
func wireType(k protoreflect.Kind) (protowire.Type, bool) {
	switch k {
	case protoreflect.BoolKind, protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Sint32Kind,
		protoreflect.Uint32Kind, protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind:
		return protowire.VarintType, true
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type, true
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type, true
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType, true
	}
	return 0, false
}
