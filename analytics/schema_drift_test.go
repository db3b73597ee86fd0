package analytics

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// The event schema is written three times: events.proto, the column mapping
// (rows_*.go) and the SQL migrations. TestSchemaDrift keeps them one source:
// every field of every message of events.proto has a ClickHouse column in
// both the mapping and the migrations, or is listed in leftOut with the
// reason it is not recorded. Adding a proto field without deciding its column
// fails here.
//
// A field of an event message matches the column of the same name in its
// message's table (eventTables); the fields of a message embedded in events
// (envelopeLike) match columns of the tables of the events that hold it.
// Fields stored under another name, or as something derived from them, are
// in renamed. Message-typed fields always need an explicit decision, unless
// their message is embedded.

// eventTables: the messages recorded as one raw table each.
var eventTables = map[string]string{
	"Task":        TableTasks,
	"Observation": TableObs,
	"Action":      TableActions,
	"Reward":      TableRewards,
	"Telemetry":   TableTelemetry,
	"Transition":  TableTransitions,
	"Episode":     TableEpisodes,
	"Weights":     TableWeights,
	"DeadLetter":  TableDeadLetters,
}

// envelopeLike: messages flattened into the tables of the events holding
// them, and which tables those are.
var envelopeLike = map[string][]string{
	"Envelope":           {TableTasks, TableObs, TableActions, TableRewards, TableTelemetry, TableTransitions, TableEpisodes, TableWeights, TableDeadLetters},
	"TaskRef":            {TableObs},
	"ObservationTimings": {TableObs},
	"TransitionTimings":  {TableTransitions},
	"LMOutput":           {TableActions},
}

// renamed: fields kept under other column names (or as values derived from
// them), in the table(s) of their message.
var renamed = map[string][]string{
	// Nanoseconds, and DateTime seconds for partitioning and grouping.
	"Envelope.produced_at_unix_nano":        {"produced_at_ns", "produced_at"},
	"Telemetry.window_start_unix_nano":      {"window_start_ns"},
	"Telemetry.window_end_unix_nano":        {"window_end_ns", "window_end"},
	"Weights.created_at_unix_nano":          {"created_at_ns"},
	"DeadLetter.source_timestamp_unix_nano": {"source_timestamp_ns"},
	// Bytes stay on Kafka; ClickHouse keeps their size and sha256.
	"Observation.frame":  {"frame_bytes", "frame_sha256"},
	"Weights.onnx":       {"onnx_bytes", "onnx_sha256"},
	"DeadLetter.payload": {"source_payload_bytes", "source_payload_sha256"},
	// The elements stay on Kafka; obs counts them and keeps their bids and
	// boxes (to outline an action's target in the dashboard).
	"Observation.elements": {"elements", "element_bids", "element_boxes"},
	"Action.type":          {"action_type"},
	// Sorted by name, so a metric sits at the same index in every row.
	"Weights.metrics": {"metric_names", "metric_values"},
	// A transition keeps the ids of the events it joined, not their frames.
	"Transition.obs":    {"obs_event_id"},
	"Transition.action": {"action_event_id", "action_type"},
	// A language model's generation: its reply and counts (issue 39).
	"Action.lm":               {"lm_backend", "lm_model", "lm_text", "lm_output_tokens", "lm_prompt_tokens", "lm_finish_reason", "lm_invalid", "lm_invalid_reason", "lm_latency_ms", "lm_attempts", "lm_answer", "lm_temperature"},
	"LMOutput.backend":        {"lm_backend"},
	"LMOutput.model":          {"lm_model"},
	"LMOutput.text":           {"lm_text"},
	"LMOutput.token_logprobs": {"lm_output_tokens"},
	"LMOutput.prompt_tokens":  {"lm_prompt_tokens"},
	"LMOutput.finish_reason":  {"lm_finish_reason"},
	"LMOutput.invalid":        {"lm_invalid"},
	"LMOutput.invalid_reason": {"lm_invalid_reason"},
	"LMOutput.latency_ms":     {"lm_latency_ms"},
	"LMOutput.attempts":       {"lm_attempts"},
	"LMOutput.answer":         {"lm_answer"},
	"LMOutput.temperature":    {"lm_temperature"},
	// Deprecated (issue 18): transitions written before next_obs_event_id
	// embed s_t+1; its id fills the same column.
	"Transition.next_obs": {"next_obs_event_id"},
}

// leftOut: fields deliberately without a column, each with its reason.
var leftOut = func() map[string]string {
	m := map[string]string{
		"Observation.previous_action": "the previous step's action is that step's actions row (actions.raw)",
		"Observation.previous_bid":    "the previous step's target is that step's actions row (actions.bid)",
	}
	// The page's elements are featurizer input: they stay on the obs topic
	// (and in event_log, byte for byte); obs.elements counts them, and
	// element_bids and element_boxes keep what outlines an action's target.
	for _, f := range []string{"role", "text", "checked", "value", "focused", "disabled", "options", "hint", "context", "dom_id", "selected"} {
		m["Element."+f] = "elements stay on Kafka and in event_log; obs.elements counts them"
	}
	for _, f := range []string{"bid", "box"} {
		m["Element."+f] = "kept in the arrays obs.element_bids and obs.element_boxes (Observation.elements)"
	}
	for _, f := range []string{"x", "y", "w", "h"} {
		m["Box."+f] = "an element's box, in obs.element_boxes as [x, y, w, h] (Observation.elements)"
	}
	// The page's text and the memory are featurizer input like the
	// elements: on the obs topic and in event_log; a past step is that
	// step's actions and rewards rows.
	m["Observation.page_text"] = "featurizer input: stays on Kafka and in event_log, like the elements"
	m["Observation.memory"] = "the episode's earlier steps, each already a row of actions and rewards"
	for _, f := range []string{"step", "type", "target_text", "text", "url", "reward", "page_text"} {
		m["PastStep."+f] = "a past step is that step's actions and rewards rows (and its page's obs row); the memory stays on Kafka and in event_log"
	}
	m["LMOutput.token_ids"] = "per-token arrays stay on the actions topic and in event_log; actions.lm_output_tokens counts them"
	m["LMOutput.tokens"] = "per-token arrays stay on the actions topic and in event_log; actions.lm_output_tokens counts them"
	for _, f := range []string{"frozen_sha256", "frozen_blocks", "frozen_rows"} {
		m["LMOutput."+f] = "the learner's claim check on the actor's frozen-block states, no fact about the step: stays on the actions topic and in event_log; learner_lm_frozen_cache_total counts its use"
	}
	return m
}()

func TestSchemaDrift(t *testing.T) {
	sqlCols := migrationColumns(t)
	goCols := map[string][]string{}
	for _, b := range NewRows().blocks {
		for _, c := range b.cols {
			goCols[b.table] = append(goCols[b.table], c.name())
		}
	}
	// The mapping and the migrations name the same columns.
	for table, cols := range goCols {
		for _, c := range cols {
			if !slices.Contains(sqlCols[table], c) {
				t.Errorf("analytics/rows_*.go writes %s.%s, which no migration in analytics/migrations creates", table, c)
			}
		}
		for _, c := range sqlCols[table] {
			if !slices.Contains(cols, c) {
				t.Errorf("the migrations create %s.%s, which analytics/rows_*.go never writes (every row would hold the default)", table, c)
			}
		}
	}
	hasCol := func(table, col string) bool { return slices.Contains(goCols[table], col) }

	used := map[string]bool{}
	walkMessages(eventspb.File_asyncwebrl_v1_events_proto.Messages(), func(md protoreflect.MessageDescriptor) {
		msg := relName(md)
		tables := envelopeLike[msg]
		if tb, ok := eventTables[msg]; ok {
			tables = []string{tb}
		}
		fields := md.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			key := msg + "." + string(fd.Name())
			where := fmt.Sprintf("events.proto: %s (field %d)", key, fd.Number())
			if why, ok := leftOut[key]; ok {
				used[key] = true
				if why == "" {
					t.Errorf("%s is left out without a reason", where)
				}
				if _, also := renamed[key]; also {
					t.Errorf("%s is both left out and renamed in analytics/schema_drift_test.go", where)
				}
				continue
			}
			var want []string
			switch cols, ok := renamed[key]; {
			case ok:
				used[key] = true
				want = cols
			case fd.Message() != nil && !fd.IsList() && !fd.IsMap() && envelopeLike[relName(fd.Message())] != nil:
				// Flattened: its own fields are checked as that message's.
				for _, tb := range tables {
					if !slices.Contains(envelopeLike[relName(fd.Message())], tb) {
						t.Errorf("%s: %s is flattened into table %s, but envelopeLike in analytics/schema_drift_test.go does not list it there",
							where, fd.Message().Name(), tb)
					}
				}
				continue
			case fd.Message() != nil:
				t.Errorf("%s is a message field without a column decision: list its columns in renamed or the reason it is not recorded in leftOut (analytics/schema_drift_test.go)", where)
				continue
			default:
				want = []string{string(fd.Name())}
			}
			if len(tables) == 0 {
				t.Errorf("%s has no ClickHouse column: %s is not recorded as a table, so list the field in leftOut in analytics/schema_drift_test.go with the reason", where, msg)
				continue
			}
			for _, tb := range tables {
				for _, c := range want {
					if !hasCol(tb, c) {
						t.Errorf("%s has no ClickHouse column %s.%s: add it (a migration in analytics/migrations and the %s block in analytics/rows_*.go), or list the field in leftOut in analytics/schema_drift_test.go with the reason it is not recorded",
							where, tb, c, tb)
					}
				}
			}
		}
	})
	// Entries for fields that no longer exist would hide the next decision.
	for _, m := range []map[string]string{leftOut, stringsOf(renamed)} {
		for key := range m {
			if !used[key] {
				t.Errorf("analytics/schema_drift_test.go decides %s, which events.proto does not have", key)
			}
		}
	}
}

func walkMessages(ms protoreflect.MessageDescriptors, fn func(protoreflect.MessageDescriptor)) {
	for i := range ms.Len() {
		md := ms.Get(i)
		if md.IsMapEntry() {
			continue
		}
		fn(md)
		walkMessages(md.Messages(), fn)
	}
}

// relName is the message's name inside the proto package ("Outer.Inner"
// for a nested one).
func relName(md protoreflect.MessageDescriptor) string {
	return strings.TrimPrefix(string(md.FullName()), string(md.ParentFile().Package())+".")
}

func stringsOf(m map[string][]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = strings.Join(v, ",")
	}
	return out
}

var (
	createTable = regexp.MustCompile(`(?s)^CREATE TABLE (?:IF NOT EXISTS )?\{db\}\.(\w+)\s*\((.*)\)\s*ENGINE`)
	columnLine  = regexp.MustCompile(`^\s*(\w+)\s+\S`)
	alterTable  = regexp.MustCompile(`(?s)^ALTER TABLE \{db\}\.(\w+)\s+(.*)$`)
	// The column name follows ADD/DROP COLUMN; a type may hold commas
	// (Enum8), so clauses are found, not split.
	alterColumn = regexp.MustCompile(`(?i)\b(ADD|DROP|RENAME) COLUMN (?:IF (?:NOT )?EXISTS )?(\w+)`)
)

// migrationColumns replays the migrations' CREATE TABLE and ALTER TABLE
// ADD/DROP COLUMN statements: each table's columns after all of them. A
// RENAME stops it, rather than be read wrong.
func migrationColumns(t *testing.T) map[string][]string {
	t.Helper()
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	cols := map[string][]string{}
	for _, m := range ms {
		for _, s := range m.Statements {
			s = strings.TrimSpace(s)
			if g := createTable.FindStringSubmatch(s); g != nil {
				for _, line := range strings.Split(g[2], "\n") {
					if c := columnLine.FindStringSubmatch(line); c != nil {
						cols[g[1]] = append(cols[g[1]], c[1])
					}
				}
				continue
			}
			g := alterTable.FindStringSubmatch(s)
			if g == nil {
				continue
			}
			for _, c := range alterColumn.FindAllStringSubmatch(g[2], -1) {
				switch strings.ToUpper(c[1]) {
				case "ADD":
					cols[g[1]] = append(cols[g[1]], c[2])
				case "DROP":
					cols[g[1]] = slices.DeleteFunc(cols[g[1]], func(x string) bool { return x == c[2] })
				default:
					t.Fatalf("migration %04d_%s: %s COLUMN %s: teach migrationColumns (analytics/schema_drift_test.go) what it does", m.Version, m.Name, c[1], c[2])
				}
			}
		}
	}
	for tb := range cols {
		sort.Strings(cols[tb])
	}
	return cols
}
