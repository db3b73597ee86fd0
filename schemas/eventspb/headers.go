package eventspb

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Record headers every AsyncWebRL producer sets (services/internal/kafka's
// produce hook), so that a consumer that knows no topic names, in any
// language, can decode any record: the value's message type and the schema
// version of the build that produced it.
const (
	// HeaderMessageType holds the value's full protobuf message name, e.g.
	// "asyncwebrl.v1.Observation".
	HeaderMessageType = "asyncwebrl-message-type"
	// HeaderSchemaVersion holds SchemaVersion of the producing build, in
	// decimal.
	HeaderSchemaVersion = "asyncwebrl-schema-version"
)

// SchemaVersionHeader is HeaderSchemaVersion's value for this build.
var SchemaVersionHeader = fmt.Sprint(SchemaVersion)

// DecodeNamed decodes b as the message named by a HeaderMessageType value,
// the way a generic consumer does: any message of events.proto or
// joinstate.proto, validated when it is an event. Errors are *DecodeError.
func DecodeNamed(messageType string, b []byte) (proto.Message, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(messageType))
	if err != nil || mt.Descriptor().ParentFile().Package() != File_asyncwebrl_v1_events_proto.Package() {
		return nil, &DecodeError{Type: messageType, Reason: ReasonCode_REASON_CODE_UNKNOWN_TYPE,
			Err: fmt.Errorf("%q is not a message of package %s", messageType, File_asyncwebrl_v1_events_proto.Package())}
	}
	m := mt.New().Interface()
	if err := unmarshalOptions.Unmarshal(b, m); err != nil {
		return nil, &DecodeError{Type: typeName(m), Reason: ReasonCode_REASON_CODE_DECODE_ERROR, Err: err}
	}
	if ev, ok := m.(Event); ok {
		if err := Validate(ev); err != nil {
			return nil, &DecodeError{Type: typeName(m), Reason: ReasonCode_REASON_CODE_SCHEMA_INVALID, Err: err}
		}
	}
	return m, nil
}
