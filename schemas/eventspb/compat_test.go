package eventspb

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

var update = flag.Bool("update", false, "rewrite testdata/schema.golden after additive schema changes")

var goldenPath = filepath.Join("testdata", "schema.golden")

const goldenHeader = `# Snapshot of schemas/asyncwebrl/v1/events.proto, generated from the compiled
# descriptors by compat_test.go. Entries may only be added (or a removed field
# turned into reserved entries). After adding fields or enum values run:
#   go test ./schemas/eventspb -run TestSchema -update
`

// TestSchemaCompatible fails when the compiled schema breaks an entry of the
// golden snapshot: a field or enum value removed without reservation,
// renumbered, retyped, relabelled or renamed. Additions are allowed; with
// -update they are written to the golden.
func TestSchemaCompatible(t *testing.T) {
	raw, err := os.ReadFile(goldenPath)
	if err != nil && !(*update && os.IsNotExist(err)) {
		t.Fatalf("unable to read golden: %v", err)
	}
	golden, err := parseGolden(raw)
	if err != nil {
		t.Fatalf("unable to parse %s: %v", goldenPath, err)
	}
	cur := takeSnapshot(File_asyncwebrl_v1_events_proto)
	breaks, added := compare(golden, cur)
	for _, b := range breaks {
		t.Errorf("incompatible change: %s", b)
	}
	for _, a := range added {
		t.Logf("added (compatible): %s", a)
	}
	if !*update || len(breaks) > 0 {
		return
	}
	out := append([]byte(goldenHeader), cur.format()...)
	if err := os.WriteFile(goldenPath, out, 0o644); err != nil {
		t.Fatalf("unable to write golden: %v", err)
	}
	t.Logf("wrote %s (%d entries, %d new)", goldenPath, len(cur.entries), len(added))
}

// TestSchemaGoldenCurrent keeps the golden an exact snapshot of the committed
// generated code, so every field that ever shipped is protected.
func TestSchemaGoldenCurrent(t *testing.T) {
	if *update {
		t.Skip("golden being rewritten")
	}
	raw, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("unable to read golden: %v", err)
	}
	want := append([]byte(goldenHeader), takeSnapshot(File_asyncwebrl_v1_events_proto).format()...)
	if !bytes.Equal(raw, want) {
		t.Fatalf("%s does not match events.pb.go; after a compatible change run:\n  go test ./schemas/eventspb -run TestSchema -update", goldenPath)
	}
}

// TestCompareDetectsBreaks proves the checker on mutated copies of the schema.
func TestCompareDetectsBreaks(t *testing.T) {
	golden, err := parseGolden(takeSnapshot(File_asyncwebrl_v1_events_proto).format())
	if err != nil {
		t.Fatal(err)
	}
	field := func(fdp *descriptorpb.FileDescriptorProto, msg, name string) (*descriptorpb.DescriptorProto, int) {
		for _, m := range fdp.MessageType {
			if m.GetName() == msg {
				for i, f := range m.Field {
					if f.GetName() == name {
						return m, i
					}
				}
			}
		}
		t.Fatalf("no field %s.%s", msg, name)
		return nil, 0
	}
	tests := []struct {
		name   string
		mutate func(*descriptorpb.FileDescriptorProto)
		breaks []string // substrings, one per expected break
		added  []string
	}{
		{name: "unchanged", mutate: func(*descriptorpb.FileDescriptorProto) {}},
		{name: "renumbered", mutate: func(fdp *descriptorpb.FileDescriptorProto) {
			m, i := field(fdp, "Observation", "url")
			m.Field[i].Number = proto.Int32(99)
		}, breaks: []string{`asyncwebrl.v1.Observation.url: was "15 string optional", now "99 string optional"`}},
		{name: "retyped", mutate: func(fdp *descriptorpb.FileDescriptorProto) {
			m, i := field(fdp, "Action", "policy_version")
			m.Field[i].Type = descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum()
		}, breaks: []string{`asyncwebrl.v1.Action.policy_version: was "26 uint64 optional", now "26 int64 optional"`}},
		{name: "made repeated", mutate: func(fdp *descriptorpb.FileDescriptorProto) {
			m, i := field(fdp, "Reward", "reason")
			m.Field[i].Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
		}, breaks: []string{`asyncwebrl.v1.Reward.reason: was "12 string optional", now "12 string repeated"`}},
		{name: "renamed", mutate: func(fdp *descriptorpb.FileDescriptorProto) {
			m, i := field(fdp, "Task", "seed")
			m.Field[i].Name = proto.String("task_seed")
			m.Field[i].JsonName = proto.String("taskSeed")
		}, breaks: []string{"asyncwebrl.v1.Task.seed (5 int64 optional): removed without reserving"},
			added: []string{"asyncwebrl.v1.Task.task_seed = 5 int64 optional"}},
		{name: "removed", mutate: func(fdp *descriptorpb.FileDescriptorProto) {
			m, i := field(fdp, "Episode", "duration_ms")
			m.Field = slices.Delete(m.Field, i, i+1)
		}, breaks: []string{"asyncwebrl.v1.Episode.duration_ms (16 uint64 optional): removed without reserving"}},
		{name: "removed reserving only the number", mutate: func(fdp *descriptorpb.FileDescriptorProto) {
			m, i := field(fdp, "Episode", "duration_ms")
			m.Field = slices.Delete(m.Field, i, i+1)
			m.ReservedRange = append(m.ReservedRange, &descriptorpb.DescriptorProto_ReservedRange{Start: proto.Int32(16), End: proto.Int32(17)})
		}, breaks: []string{"asyncwebrl.v1.Episode.duration_ms (16 uint64 optional): removed without reserving"},
			added: []string{"asyncwebrl.v1.Episode.#16-16 = reserved"}},
		{name: "removed and reserved", mutate: func(fdp *descriptorpb.FileDescriptorProto) {
			m, i := field(fdp, "Episode", "duration_ms")
			m.Field = slices.Delete(m.Field, i, i+1)
			m.ReservedRange = append(m.ReservedRange, &descriptorpb.DescriptorProto_ReservedRange{Start: proto.Int32(16), End: proto.Int32(17)})
			m.ReservedName = append(m.ReservedName, "duration_ms")
		}, added: []string{"asyncwebrl.v1.Episode.#16-16 = reserved", "asyncwebrl.v1.Episode.duration_ms = reserved"}},
		{name: "field added", mutate: func(fdp *descriptorpb.FileDescriptorProto) {
			m, _ := field(fdp, "Telemetry", "actor_id")
			m.Field = append(m.Field, &descriptorpb.FieldDescriptorProto{
				Name: proto.String("crashes"), JsonName: proto.String("crashes"), Number: proto.Int32(20),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_UINT32.Enum(),
			})
		}, added: []string{"asyncwebrl.v1.Telemetry.crashes = 20 uint32 optional"}},
		{name: "enum value renumbered", mutate: func(fdp *descriptorpb.FileDescriptorProto) {
			for _, e := range fdp.EnumType {
				if e.GetName() == "Tier" {
					e.Value[3].Number = proto.Int32(30)
				}
			}
		}, breaks: []string{`asyncwebrl.v1.Tier.TIER_HARD: was "3 enum_value", now "30 enum_value"`}},
		{name: "message removed", mutate: func(fdp *descriptorpb.FileDescriptorProto) {
			fdp.MessageType = slices.DeleteFunc(fdp.MessageType, func(m *descriptorpb.DescriptorProto) bool {
				return m.GetName() == "DeadLetter"
			})
		}, breaks: slices.Repeat([]string{"asyncwebrl.v1.DeadLetter."}, 11)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fdp := protodesc.ToFileDescriptorProto(File_asyncwebrl_v1_events_proto)
			tt.mutate(fdp)
			fd, err := protodesc.NewFile(fdp, nil)
			if err != nil {
				t.Fatalf("mutated schema does not build: %v", err)
			}
			breaks, added := compare(golden, takeSnapshot(fd))
			if len(breaks) != len(tt.breaks) {
				t.Fatalf("breaks = %q, want %d matching %q", breaks, len(tt.breaks), tt.breaks)
			}
			for i := range breaks {
				if !strings.Contains(breaks[i], tt.breaks[i]) {
					t.Fatalf("break %q, want it to contain %q", breaks[i], tt.breaks[i])
				}
			}
			if !slices.Equal(added, tt.added) {
				t.Fatalf("added = %q, want %q", added, tt.added)
			}
		})
	}
}

// TestEveryEventStartsWithEnvelope checks the envelope rule and that every
// event message has a decoder.
func TestEveryEventStartsWithEnvelope(t *testing.T) {
	msgs := File_asyncwebrl_v1_events_proto.Messages()
	var events []string
	for i := range msgs.Len() {
		m := msgs.Get(i)
		env := m.Fields().ByName("envelope")
		if env == nil {
			continue
		}
		events = append(events, string(m.Name()))
		if env.Number() != 1 || env.Kind() != protoreflect.MessageKind || env.Message().Name() != "Envelope" {
			t.Errorf("%s.envelope must be field 1 of type Envelope", m.Name())
		}
	}
	var want []string
	for name := range decoders {
		want = append(want, name)
	}
	slices.Sort(events)
	slices.Sort(want)
	if !slices.Equal(events, want) {
		t.Fatalf("messages with an envelope %q, decoders %q", events, want)
	}
	if len(testEvents()) != len(want) {
		t.Fatalf("testEvents has %d events, want one per type (%d)", len(testEvents()), len(want))
	}
}
