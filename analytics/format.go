package analytics

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
	"time"
)

// Formats of Write.
var Formats = []string{"table", "csv", "json"}

// Write renders r as an aligned text table, CSV with a header line, or a
// JSON array of objects whose keys keep the column order.
func (r *Result) Write(w io.Writer, format string) error {
	switch format {
	case "table":
		return r.writeTable(w)
	case "csv":
		return r.writeCSV(w)
	case "json":
		return r.writeJSON(w)
	}
	return fmt.Errorf("unable to write result: unknown format %q (want table, csv or json)", format)
}

func (r *Result) writeTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for i, c := range r.Columns {
		if i > 0 {
			fmt.Fprint(tw, "\t")
		}
		fmt.Fprint(tw, c)
	}
	fmt.Fprintln(tw)
	for _, row := range r.Rows {
		for i, v := range row {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, Text(v))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("unable to write result: %w", err)
	}
	return nil
}

func (r *Result) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(r.Columns); err != nil {
		return fmt.Errorf("unable to write result: %w", err)
	}
	rec := make([]string, len(r.Columns))
	for _, row := range r.Rows {
		for i, v := range row {
			rec[i] = Text(v)
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("unable to write result: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("unable to write result: %w", err)
	}
	return nil
}

func (r *Result) writeJSON(w io.Writer) error {
	var buf bytes.Buffer
	buf.WriteString("[")
	for n, row := range r.Rows {
		if n > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n  {")
		for i, v := range row {
			if i > 0 {
				buf.WriteString(", ")
			}
			k, _ := json.Marshal(r.Columns[i])
			val, err := json.Marshal(JSONValue(v))
			if err != nil {
				return fmt.Errorf("unable to write result column %s: %w", r.Columns[i], err)
			}
			buf.Write(k)
			buf.WriteString(": ")
			buf.Write(val)
		}
		buf.WriteString("}")
	}
	if len(r.Rows) > 0 {
		buf.WriteString("\n")
	}
	buf.WriteString("]\n")
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("unable to write result: %w", err)
	}
	return nil
}

// Text renders one value for the table and CSV formats: times as UTC
// "2006-01-02 15:04:05", floats in their shortest exact form.
func Text(v any) string {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format(time.DateTime)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32)
	case string:
		return x
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// JSONValue makes a value JSON-safe: times become RFC 3339 UTC strings and
// non-finite floats (0/0 in a ratio) become null.
func JSONValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil
		}
	}
	return v
}
