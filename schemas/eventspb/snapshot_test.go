package eventspb

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// A schema snapshot maps "pkg.Message.field" to "number type label",
// "pkg.Enum.VALUE" to "number enum_value", and reserved names/numbers
// ("pkg.Message.name", "pkg.Message.#5-9") to "reserved". It is what
// testdata/schema.golden holds, one "key = value" per line, sorted.
type snapshot struct {
	entries map[string]string
	// parents by full name, to look up what a message or enum reserves.
	parents map[string]protoreflect.Descriptor
}

const reservedValue = "reserved"

func takeSnapshot(fd protoreflect.FileDescriptor) snapshot {
	s := snapshot{entries: map[string]string{}, parents: map[string]protoreflect.Descriptor{}}
	s.addEnums(fd.Enums())
	s.addMessages(fd.Messages())
	return s
}

func (s snapshot) addMessages(ms protoreflect.MessageDescriptors) {
	for i := range ms.Len() {
		m := ms.Get(i)
		if m.IsMapEntry() {
			continue // rendered as the map field's type
		}
		s.parents[string(m.FullName())] = m
		fields := m.Fields()
		for j := range fields.Len() {
			f := fields.Get(j)
			s.entries[string(f.FullName())] = fmt.Sprintf("%d %s %s", f.Number(), fieldType(f), f.Cardinality())
		}
		for j := range m.ReservedNames().Len() {
			s.entries[string(m.FullName())+"."+string(m.ReservedNames().Get(j))] = reservedValue
		}
		for j := range m.ReservedRanges().Len() {
			r := m.ReservedRanges().Get(j) // [start, end)
			s.entries[fmt.Sprintf("%s.#%d-%d", m.FullName(), r[0], r[1]-1)] = reservedValue
		}
		s.addEnums(m.Enums())
		s.addMessages(m.Messages())
	}
}

func (s snapshot) addEnums(es protoreflect.EnumDescriptors) {
	for i := range es.Len() {
		e := es.Get(i)
		s.parents[string(e.FullName())] = e
		for j := range e.Values().Len() {
			v := e.Values().Get(j)
			// An enum value's FullName is a sibling of its enum; key it under the enum.
			s.entries[string(e.FullName())+"."+string(v.Name())] = fmt.Sprintf("%d enum_value", v.Number())
		}
		for j := range e.ReservedNames().Len() {
			s.entries[string(e.FullName())+"."+string(e.ReservedNames().Get(j))] = reservedValue
		}
		for j := range e.ReservedRanges().Len() {
			r := e.ReservedRanges().Get(j) // [start, end], inclusive
			s.entries[fmt.Sprintf("%s.#%d-%d", e.FullName(), r[0], r[1])] = reservedValue
		}
	}
}

func fieldType(f protoreflect.FieldDescriptor) string {
	if f.IsMap() {
		return fmt.Sprintf("map<%s,%s>", fieldType(f.MapKey()), fieldType(f.MapValue()))
	}
	switch f.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return "message:" + string(f.Message().FullName())
	case protoreflect.EnumKind:
		return "enum:" + string(f.Enum().FullName())
	}
	return f.Kind().String()
}

func (s snapshot) format() []byte {
	keys := make([]string, 0, len(s.entries))
	for k := range s.entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %s\n", k, s.entries[k])
	}
	return b.Bytes()
}

func parseGolden(b []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, " = ")
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not \"key = value\"", n, line)
		}
		out[k] = v
	}
	return out, sc.Err()
}

// compare reports the golden entries that cur breaks and the entries cur
// adds (including a removed field's name turning into a reserved entry). A field or enum value may disappear only if its parent now reserves
// both its name and its number.
func compare(golden map[string]string, cur snapshot) (breaks, added []string) {
	for k, want := range golden {
		got, ok := cur.entries[k]
		switch {
		case ok && got == want:
		case want == reservedValue:
			breaks = append(breaks, fmt.Sprintf("%s: was reserved, now %q", k, got))
		case ok && got != reservedValue:
			breaks = append(breaks, fmt.Sprintf("%s: was %q, now %q", k, want, got))
		case !cur.removedProperly(k, want):
			breaks = append(breaks, fmt.Sprintf("%s (%s): removed without reserving both its name and number", k, want))
		case ok:
			added = append(added, k+" = "+got) // a removed field's name, now reserved
		}
	}
	for k, v := range cur.entries {
		if _, ok := golden[k]; !ok {
			added = append(added, k+" = "+v)
		}
	}
	slices.Sort(breaks)
	slices.Sort(added)
	return breaks, added
}

func (s snapshot) removedProperly(key, golden string) bool {
	i := strings.LastIndexByte(key, '.')
	var num int32
	if i < 0 {
		return false
	}
	if _, err := fmt.Sscanf(golden, "%d", &num); err != nil {
		return false
	}
	name := protoreflect.Name(key[i+1:])
	switch p := s.parents[key[:i]].(type) {
	case protoreflect.MessageDescriptor:
		return p.ReservedNames().Has(name) && p.ReservedRanges().Has(protoreflect.FieldNumber(num))
	case protoreflect.EnumDescriptor:
		return p.ReservedNames().Has(name) && p.ReservedRanges().Has(protoreflect.EnumNumber(num))
	}
	return false // the whole message or enum is gone
}
