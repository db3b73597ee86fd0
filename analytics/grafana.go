package analytics

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// grafanaPanels are the dashboard's panels: a saved query each, and the
// columns a time series needs (time, series name, value); a panel without
// columns is a table of the query's whole result.
var grafanaPanels = []struct {
	title, query, unit string
	columns            [3]string
}{
	{"Throughput: events/s by topic", "throughput", "none", [3]string{"bucket", "topic", "events_per_s"}},
	{"Executor utilization: share of time by phase", "utilization_over_time", "percent", [3]string{"bucket", "phase", "pct"}},
	{"Consumer lag: records behind by group", "lag_over_time", "none", [3]string{"bucket", "group_id", "lag_records"}},
	{"Learning curve: success % by tier and kind", "learning_curve", "percent", [3]string{"bucket", "concat(toString(tier), ' ', toString(kind))", "success_pct"}},
	{"Staleness: mean policy lag of acted steps", "staleness_over_time", "none", [3]string{"bucket", "'mean staleness'", "mean_staleness"}},
	{"Learner: loss, approx KL, clip fraction, entropy by version", "learner_stats", "none", [3]string{}},
	{"Success and throughput per suite", "suite_summary", "none", [3]string{}},
	{"Episode outcomes: length of successes and failures", "episode_outcomes", "none", [3]string{}},
	{"Failure analysis: rubric facts failed episodes miss", "failing_facts", "none", [3]string{}},
	{"Failure analysis: last actions of failed episodes", "failed_last_actions", "none", [3]string{}},
}

// tablePanel reports whether a panel with these columns is a table.
func tablePanel(columns [3]string) bool { return columns == [3]string{} }

// GrafanaSQL turns a saved query into the ClickHouse data source's SQL:
// the time range and the bucket come from the dashboard's macros
// ($__fromTime, $__toTime, $__interval_s, at least 60: the views are by
// minute), the run from the dashboard's run variable (a text box; empty:
// every run), and only the panel's three columns are selected.
func GrafanaSQL(q Query, columns [3]string) string {
	sql := stripComments(q.SQL)
	sql = strings.NewReplacer("@since", "$__fromTime", "@until", "$__toTime", "@bucket", "greatest(60, $__interval_s)", "@run", "'${run}'").Replace(sql)
	if tablePanel(columns) {
		return sql
	}
	return fmt.Sprintf("SELECT %s AS time, toString(%s) AS metric, %s AS value\nFROM\n(\n%s\n)\nORDER BY time, metric",
		columns[0], columns[1], columns[2], sql)
}

var lineComment = regexp.MustCompile(`(?m)^\s*--.*\n?`)

func stripComments(sql string) string {
	return strings.TrimSpace(lineComment.ReplaceAllString(sql, ""))
}

// GrafanaPanel is one panel of the dashboard: its title, the saved query
// it shows and the SQL the data source runs.
type GrafanaPanel struct {
	Title, Query, SQL string
}

// GrafanaPanels are the dashboard's panels.
func GrafanaPanels() ([]GrafanaPanel, error) {
	var out []GrafanaPanel
	for _, p := range grafanaPanels {
		q, err := LookupQuery(p.query)
		if err != nil {
			return nil, err
		}
		out = append(out, GrafanaPanel{Title: p.title, Query: p.query, SQL: GrafanaSQL(q, p.columns)})
	}
	return out, nil
}

// GrafanaDashboard is the dashboard compose.yaml's Grafana provisions
// (infra/compose/grafana/dashboards/asyncwebrl.json): one time series or
// table panel per saved query above, on the ClickHouse data source (uid "clickhouse"),
// so the dashboard and `asyncwebrl query` show the same numbers.
func GrafanaDashboard() ([]byte, error) {
	gps, err := GrafanaPanels()
	if err != nil {
		return nil, err
	}
	var panels []map[string]any
	for i, p := range grafanaPanels {
		q, err := LookupQuery(p.query)
		if err != nil {
			return nil, err
		}
		typ, format, queryType := "timeseries", 0, "timeseries"
		if tablePanel(p.columns) {
			typ, format, queryType = "table", 1, "table"
		}
		panels = append(panels, map[string]any{
			"id": i + 1, "type": typ, "title": p.title, "description": q.Summary,
			"gridPos":     map[string]int{"x": 12 * (i % 2), "y": 8 * (i / 2), "w": 12, "h": 8},
			"datasource":  map[string]string{"type": "grafana-clickhouse-datasource", "uid": "clickhouse"},
			"fieldConfig": map[string]any{"defaults": map[string]any{"unit": p.unit}, "overrides": []any{}},
			"targets": []map[string]any{{
				"refId": "A", "datasource": map[string]string{"type": "grafana-clickhouse-datasource", "uid": "clickhouse"},
				"editorType": "sql", "format": format, "queryType": queryType, "rawSql": gps[i].SQL,
			}},
		})
	}
	d := map[string]any{
		"uid": "asyncwebrl", "title": "AsyncWebRL", "schemaVersion": 39, "version": 1, "editable": true,
		"time": map[string]string{"from": "now-1h", "to": "now"}, "refresh": "30s",
		"tags": []string{"asyncwebrl"},
		"templating": map[string]any{"list": []map[string]any{{
			"name": "run", "label": "run (topic prefix, empty: all)", "type": "textbox", "query": "",
			"current": map[string]string{"text": "", "value": ""},
		}}},
		"panels": panels,
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("unable to encode the dashboard: %w", err)
	}
	return append(b, '\n'), nil
}
