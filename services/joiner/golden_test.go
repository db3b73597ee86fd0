package joiner

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

type protoreflectMessage = protoreflect.Message

// rawMarshal encodes without the codec's validation, to build invalid
// events.
func rawMarshal(m interface{ ProtoReflect() protoreflectMessage }) ([]byte, error) {
	return proto.Marshal(m.ProtoReflect().Interface())
}

// TestGolden runs the state machine specifications in testdata/*.txt
// (rewrite them with: go test ./services/joiner -run TestGolden -rewrite).
//
// Commands:
//
//	init [window=<duration>] [stale=<K>]   a fresh machine
//	feed                                   apply the input lines (see dsl_test.go)
//	stats                                  the machine's counters
//	restore                                rebuild the machine from its changelog
//
// After every input record the harness also checks that the counters
// balance, that every output passes the codec's validation, and that a
// machine rebuilt from the changelog written so far holds exactly the same
// state (so a crash after any commit loses nothing).
func TestGolden(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{t: t}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return h.run(d)
		})
	})
}

type harness struct {
	t         *testing.T
	set       Settings
	m         *Machine
	feed      *feeder
	changelog map[string][]byte
	// log holds every record fed, by source: the input topics a restore
	// reads pending payloads back from.
	log inputLog
}

func (h *harness) run(d *datadriven.TestData) string {
	t := h.t
	switch d.Cmd {
	case "init":
		h.set = DefaultSettings()
		h.set.Window = 10 * time.Second
		for _, arg := range d.CmdArgs {
			switch arg.Key {
			case "window":
				w, err := time.ParseDuration(arg.Vals[0])
				if err != nil {
					d.Fatalf(t, "window: %v", err)
				}
				h.set.Window = w
			case "stale":
				k, err := strconv.ParseUint(arg.Vals[0], 10, 64)
				if err != nil {
					d.Fatalf(t, "stale: %v", err)
				}
				h.set.MaxStaleness = k
			default:
				d.Fatalf(t, "unknown init argument %s", arg.Key)
			}
		}
		m, err := NewMachine(0, h.set)
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		h.m, h.feed, h.changelog, h.log = m, newFeeder(), map[string][]byte{}, inputLog{}
		return ""
	case "feed":
		var p printer
		for _, line := range strings.Split(d.Input, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			rec, err := h.feed.parse(line)
			if err != nil {
				d.Fatalf(t, "%s: %v", line, err)
			}
			h.log.add(rec)
			h.m.Apply(rec)
			out, err := h.m.Take()
			if err != nil {
				d.Fatalf(t, "take: %v", err)
			}
			checkOutput(t, out)
			p.output(out)
			h.commit(out)
			h.check(d, line)
		}
		return p.buf.String()
	case "stats":
		var p printer
		p.stats(h.m.Stats())
		return p.buf.String()
	case "restore":
		h.m = h.rebuild(d)
		var p printer
		p.stats(h.m.Stats())
		return p.buf.String()
	}
	d.Fatalf(t, "unknown command %s", d.Cmd)
	return ""
}

// commit applies the changelog records as compaction would.
func (h *harness) commit(out Output) {
	for _, r := range out.Changelog {
		if r.Value == nil {
			delete(h.changelog, r.Key)
		} else {
			h.changelog[r.Key] = r.Value
		}
	}
}

func (h *harness) rebuild(d *datadriven.TestData) *Machine {
	m, err := NewMachine(0, h.set)
	if err != nil {
		d.Fatalf(h.t, "%v", err)
	}
	for _, k := range sortedKeys(h.changelog) {
		if err := m.Restore(k, h.changelog[k]); err != nil {
			d.Fatalf(h.t, "restore %s: %v", k, err)
		}
	}
	if err := h.log.fill(m); err != nil {
		d.Fatalf(h.t, "%v", err)
	}
	return m
}

// inputLog stands for the input topics: records by source.
type inputLog map[srcKey][]byte

func (l inputLog) add(r Record) { l[sourceKey(r.Source)] = r.Value }

// fill reads back the payloads a restored machine misses, as the service
// does from Kafka.
func (l inputLog) fill(m *Machine) error {
	for _, src := range m.MissingPayloads() {
		v, ok := l[sourceKey(src)]
		if !ok {
			return fmt.Errorf("restore: %s@%d was never fed", src.Topic, src.Offset)
		}
		if err := m.FillPayload(src, v); err != nil {
			return err
		}
	}
	return nil
}

func (h *harness) check(d *datadriven.TestData, line string) {
	t := h.t
	if s := h.m.Stats(); !s.Balanced() {
		d.Fatalf(t, "after %q the counters do not balance: %+v", line, s)
	}
	want, err := h.m.Snapshot()
	if err != nil {
		d.Fatalf(t, "snapshot: %v", err)
	}
	got, err := h.rebuild(d).Snapshot()
	if err != nil {
		d.Fatalf(t, "snapshot: %v", err)
	}
	if len(got) != len(want) {
		d.Fatalf(t, "after %q the changelog rebuilds %d records, the machine holds %d", line, len(got), len(want))
	}
	for i := range want {
		if got[i].Key != want[i].Key || !bytes.Equal(got[i].Value, want[i].Value) {
			d.Fatalf(t, "after %q the changelog rebuilds a different %s", line, fmt.Sprint(want[i].Key))
		}
	}
}
