package analytics

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

//go:embed queries/*.sql queries/fragments/*.sql
var queryFiles embed.FS

// Query is one saved query of queries/: NAME.sql, whose leading comment
// lines are its documentation (the first line is the summary).
//
// A line of a query that holds only {{NAME}} stands for the sub-query in
// queries/fragments/NAME.sql, which several queries share: SQL holds that
// file's text (less its leading comment, which documents the fragment)
// indented as the line was. Fragments hold no {{NAME}} lines of their own.
type Query struct {
	Name        string
	Summary     string
	Description string
	SQL         string
}

// Queries returns the saved queries by name.
func Queries() ([]Query, error) {
	entries, err := fs.ReadDir(queryFiles, "queries")
	if err != nil {
		return nil, fmt.Errorf("unable to list saved queries: %w", err)
	}
	var out []Query
	for _, e := range entries {
		if e.IsDir() {
			continue // fragments/
		}
		b, err := queryFiles.ReadFile(path.Join("queries", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("unable to read saved query %s: %w", e.Name(), err)
		}
		q := parseQuery(strings.TrimSuffix(e.Name(), ".sql"), string(b))
		if q.SQL, err = expandFragments(q.SQL); err != nil {
			return nil, fmt.Errorf("unable to read saved query %s: %w", e.Name(), err)
		}
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// LookupQuery returns the saved query called name.
func LookupQuery(name string) (Query, error) {
	qs, err := Queries()
	if err != nil {
		return Query{}, err
	}
	var names []string
	for _, q := range qs {
		if q.Name == name {
			return q, nil
		}
		names = append(names, q.Name)
	}
	return Query{}, fmt.Errorf("unknown saved query %q (have %s)", name, strings.Join(names, ", "))
}

func parseQuery(name, text string) Query {
	q := Query{Name: name, SQL: strings.TrimSpace(text)}
	var doc []string
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "--") {
			break
		}
		doc = append(doc, strings.TrimSpace(strings.TrimPrefix(t, "--")))
	}
	if len(doc) > 0 {
		q.Summary = doc[0]
		q.Description = strings.Join(doc[1:], " ")
	}
	return q
}

// fragmentLine is a line that stands for a fragment: {{NAME}} alone.
var fragmentLine = regexp.MustCompile(`^(\s*)\{\{([a-z0-9_]+)\}\}\s*$`)

// expandFragments replaces each {{NAME}} line of sql with the fragment
// queries/fragments/NAME.sql, each of its lines indented as that line.
func expandFragments(sql string) (string, error) {
	lines := strings.Split(sql, "\n")
	for i, line := range lines {
		m := fragmentLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text, err := fragment(m[2])
		if err != nil {
			return "", err
		}
		body := strings.Split(text, "\n")
		for j := range body {
			if body[j] != "" {
				body[j] = m[1] + body[j]
			}
		}
		lines[i] = strings.Join(body, "\n")
	}
	return strings.Join(lines, "\n"), nil
}

// fragment is queries/fragments/name.sql without its leading comment.
func fragment(name string) (string, error) {
	b, err := queryFiles.ReadFile(path.Join("queries", "fragments", name+".sql"))
	if err != nil {
		return "", fmt.Errorf("no fragment %s (queries/fragments/%s.sql)", name, name)
	}
	var body []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if len(body) == 0 && strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		if fragmentLine.MatchString(line) {
			return "", fmt.Errorf("fragment %s uses a fragment (%s): fragments do not nest", name, strings.TrimSpace(line))
		}
		body = append(body, line)
	}
	if len(body) == 0 {
		return "", fmt.Errorf("fragment %s is empty", name)
	}
	return strings.Join(body, "\n"), nil
}

// Params are the values a saved query's placeholders take: @since and
// @until (DateTime, the window [since, until)), @bucket (UInt32 seconds,
// the width of a time bucket in charts) and @run (String, the run whose
// rows count: its topic prefix, the tables' run column; empty for all runs).
type Params struct {
	Since  time.Time
	Until  time.Time
	Bucket time.Duration // zero: AutoBucket(Until - Since)
	Run    string        // empty: every run
}

// bucketSteps are the bucket widths charts use: whole minutes at least,
// because the materialized views are per minute.
var bucketSteps = []time.Duration{
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// AutoBucket picks the smallest bucket width that keeps a window of this
// length to at most 120 points.
func AutoBucket(window time.Duration) time.Duration {
	for _, b := range bucketSteps {
		if window <= 120*b {
			return b
		}
	}
	return bucketSteps[len(bucketSteps)-1]
}

func (p Params) args() []any {
	b := p.Bucket
	if b <= 0 {
		b = AutoBucket(p.Until.Sub(p.Since))
	}
	if b < time.Second {
		b = time.Second
	}
	// Bound as UTC wall-clock literals: the server and every DateTime
	// column here are UTC.
	return []any{
		clickhouse.Named("since", p.Since.UTC().Truncate(time.Second)),
		clickhouse.Named("until", p.Until.UTC().Truncate(time.Second)),
		clickhouse.Named("bucket", uint32(b/time.Second)),
		clickhouse.Named("run", p.Run),
	}
}

// Result is a query's output: column names and ClickHouse types, and rows
// of Go values (string, integers, float64, time.Time, slices).
type Result struct {
	Columns []string
	Types   []string
	Rows    [][]any
}

// Run executes q with p on conn, whose default database holds the tables.
func Run(ctx context.Context, conn driver.Conn, q Query, p Params) (*Result, error) {
	rows, err := conn.Query(ctx, q.SQL, p.args()...)
	if err != nil {
		return nil, fmt.Errorf("unable to run saved query %s: %w", q.Name, err)
	}
	defer rows.Close()
	cts := rows.ColumnTypes()
	res := &Result{Columns: rows.Columns()}
	for _, ct := range cts {
		res.Types = append(res.Types, ct.DatabaseTypeName())
	}
	for rows.Next() {
		ptrs := make([]any, len(cts))
		for i, ct := range cts {
			ptrs[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("unable to read saved query %s: %w", q.Name, err)
		}
		row := make([]any, len(ptrs))
		for i, p := range ptrs {
			row[i] = reflect.ValueOf(p).Elem().Interface()
		}
		res.Rows = append(res.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("unable to read saved query %s: %w", q.Name, err)
	}
	return res, nil
}
