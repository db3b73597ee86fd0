package action

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// TestTableCoversTheSchema: every value of the schema's ActionType but
// UNSPECIFIED has exactly one row, every row names a value of the enum,
// and its name, parameters and heads are consistent; an action type added
// to events.proto without a row fails here, not at run time in the actor.
func TestTableCoversTheSchema(t *testing.T) {
	seen := map[eventspb.ActionType]int{}
	for _, r := range Table {
		seen[r.Type]++
		if _, ok := eventspb.ActionType_name[int32(r.Type)]; !ok || r.Type == eventspb.ActionType_ACTION_TYPE_UNSPECIFIED {
			t.Errorf("row %s: type %d is not a value of the schema's ActionType", r.Name, r.Type)
		}
		if got, ok := ByName(r.Name); !ok || got.Type != r.Type {
			t.Errorf("row %s: ByName finds %v", r.Name, got.Type)
		}
		if r.Required > len(r.Params) {
			t.Errorf("row %s: %d required of %d parameters", r.Name, r.Required, len(r.Params))
		}
		if r.Doc == "" {
			t.Errorf("row %s: no doc", r.Name)
		}
		if r.Target == TargetNone && r.Element {
			t.Errorf("row %s: targets nothing but takes the element head", r.Name)
		}
		if r.Point != (r.Target == TargetPoint) || r.ToPoint && !r.Point {
			t.Errorf("row %s: target %s with point=%v to_point=%v: a point target takes the point head", r.Name, r.Target, r.Point, r.ToPoint)
		}
	}
	for v, name := range eventspb.ActionType_name {
		typ := eventspb.ActionType(v)
		if typ == eventspb.ActionType_ACTION_TYPE_UNSPECIFIED {
			if _, ok := ByType(typ); ok {
				t.Error("UNSPECIFIED has a row")
			}
			continue
		}
		if seen[typ] != 1 {
			t.Errorf("%s: %d rows in the action table, want 1", name, seen[typ])
		}
		if _, err := FromProto(&eventspb.Action{Type: typ}); err != nil {
			t.Errorf("%s: FromProto: %v", name, err)
		}
	}
	if _, err := FromProto(&eventspb.Action{}); err == nil {
		t.Error("FromProto accepted an action of no type")
	}
	// A multi-select's options all travel (and come back in order).
	if ev, err := ToProto(Action{Type: SelectOption, BID: "7", Options: []string{"a", "b"}}); err != nil {
		t.Errorf("ToProto of a multi-select: %v", err)
	} else if back, err := FromProto(ev); err != nil || !slices.Equal(back.Options, []string{"a", "b"}) {
		t.Errorf("a multi-select came back as %v, %v", back, err)
	}
	if _, err := ToProto(Action{Type: "keyboard_insert_text"}); err == nil {
		t.Error("ToProto accepted an action type the table does not have")
	}
}

// TestActionsGolden round-trips every action through its three forms:
// the BrowserGym string (Parse), the env's Action, the event (ToProto) and
// back (FromProto, Format), with the row that carries it. testdata/actions.txt.
func TestActionsGolden(t *testing.T) {
	datadriven.RunTest(t, "testdata/actions.txt", func(t *testing.T, d *datadriven.TestData) string {
		var b strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			fmt.Fprintf(&b, "%s\n", line)
			a, err := Parse(line)
			if err != nil {
				fmt.Fprintf(&b, "  error: %v\n", err)
				continue
			}
			r, _ := ByName(a.Type)
			fmt.Fprintf(&b, "  row: %s %s target=%s element=%v text=%v point=%v to_point=%v\n", r.Name, r.Type, r.Target, r.Element, r.Text, r.Point, r.ToPoint)
			fmt.Fprintf(&b, "  env: %+v\n", a)
			fmt.Fprintf(&b, "  string: %s\n", a)
			ev, err := ToProto(a)
			if err != nil {
				fmt.Fprintf(&b, "  proto error: %v\n", err)
				continue
			}
			fmt.Fprintf(&b, "  proto: %s\n", protoFields(ev))
			back, err := FromProto(ev)
			if err != nil {
				fmt.Fprintf(&b, "  back error: %v\n", err)
				continue
			}
			raw, _ := Format(ev)
			fmt.Fprintf(&b, "  back: %s (raw %s)\n", back, raw)
			if again, err := Parse(raw); err != nil || again.String() != back.String() {
				fmt.Fprintf(&b, "  MISMATCH: the raw form parses to %v (%v)\n", again, err)
			}
		}
		return b.String()
	})
}

// protoFields prints the set fields of an action event in a fixed form
// (prototext varies its spacing on purpose).
func protoFields(e *eventspb.Action) string {
	out := []string{e.GetType().String()}
	add := func(name, v string) {
		if v != "" {
			out = append(out, name+"="+v)
		}
	}
	add("bid", e.GetBid())
	add("to_bid", e.GetToBid())
	if e.GetX() != 0 || e.GetY() != 0 || e.GetToX() != 0 || e.GetToY() != 0 {
		add("point", fmt.Sprintf("(%g, %g)", e.GetX(), e.GetY()))
		add("to", fmt.Sprintf("(%g, %g)", e.GetToX(), e.GetToY()))
	}
	add("text", e.GetText())
	if len(e.GetOptions()) > 0 {
		add("options", strings.Join(e.GetOptions(), "|"))
	}
	add("key", e.GetKey())
	add("url", e.GetUrl())
	if e.GetDeltaX() != 0 || e.GetDeltaY() != 0 {
		add("delta", fmt.Sprintf("(%g, %g)", e.GetDeltaX(), e.GetDeltaY()))
	}
	add("raw", e.GetRaw())
	return strings.Join(out, " ")
}

// TestClickHouseEnum: the action_type Enum8 each ClickHouse table ends up
// with, after every migration in order (its CREATE, then each MODIFY
// COLUMN), lists the table's actions under the schema's numbers and
// nothing else but 'unspecified' = 0; an earlier declaration may only lack
// names (values are added, never renumbered). An action added to the table
// without a migration fails here, not in the recorder's first insert.
func TestClickHouseEnum(t *testing.T) {
	files, err := filepath.Glob("../../../analytics/migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations found: %v", err)
	}
	slices.Sort(files)
	want := map[string]int32{"unspecified": 0}
	for _, r := range Table {
		want[string(r.Name)] = int32(r.Type)
	}
	// A declaration belongs to the table named last before it.
	decl := regexp.MustCompile(`(?:TABLE(?: IF NOT EXISTS)? \{db\}\.(\w+))|action_type\s+Enum8\(([^)]*)\)`)
	item := regexp.MustCompile(`'([a-z_]+)'\s*=\s*(-?\d+)`)
	final := map[string]map[string]int32{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		table := ""
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			if m[1] != "" {
				table = m[1]
				continue
			}
			got := map[string]int32{}
			for _, it := range item.FindAllStringSubmatch(m[2], -1) {
				v, _ := strconv.Atoi(it[2])
				got[it[1]] = int32(v)
			}
			for name, v := range got {
				if w, ok := want[name]; !ok || w != v {
					t.Errorf("%s: %s.action_type has %s = %d, the schema %d (%v)", filepath.Base(f), table, name, v, w, ok)
				}
			}
			final[table] = got
		}
	}
	if len(final) == 0 {
		t.Fatal("no action_type Enum8 in the migrations")
	}
	for table, got := range final {
		if !maps.Equal(got, want) {
			t.Errorf("%s.action_type after every migration is %v, want %v", table, got, want)
		}
	}
}

// TestSets: bid is the element actions the built-in families need,
// bid+coord adds the mouse's own; every point-taking row is in bid+coord
// only, and goto and drag_and_drop are in no set.
func TestSets(t *testing.T) {
	names := func(s Set) string {
		var out []string
		for _, typ := range s.Types() {
			r, _ := ByType(typ)
			out = append(out, string(r.Name))
		}
		return strings.Join(out, " ")
	}
	if got, want := names(SetBid), "noop click fill select_option scroll press go_back send_msg_to_user"; got != want {
		t.Errorf("bid: %s, want %s", got, want)
	}
	if got, want := names(SetBidCoord), "noop click fill select_option scroll press go_back send_msg_to_user mouse_click dblclick hover mouse_drag_and_drop mouse_move keyboard_type"; got != want {
		t.Errorf("bid+coord: %s, want %s", got, want)
	}
	for _, r := range Table {
		if (r.Point || r.ToPoint) && r.Set != SetBidCoord {
			t.Errorf("row %s takes a point but is in set %q", r.Name, r.Set)
		}
	}
	for _, n := range []Name{Goto, DragAndDrop} {
		if r, _ := ByName(n); r.Set != "" {
			t.Errorf("row %s is in set %q, want none", n, r.Set)
		}
	}
	if _, err := ParseSet("coord"); err == nil || !strings.Contains(err.Error(), "bid, bid+coord") && !strings.Contains(err.Error(), "bid or bid+coord") {
		t.Errorf("ParseSet(coord): %v", err)
	}
}
