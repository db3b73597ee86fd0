package analytics

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestResultFormats(t *testing.T) {
	r := &Result{
		Columns: []string{"bucket", "topic", "events", "pct"},
		Rows: [][]any{
			{time.Date(2026, 1, 15, 10, 1, 0, 0, time.UTC), "obs", uint64(3), 12.5},
			{time.Date(2026, 1, 15, 10, 2, 0, 0, time.UTC), "a,b", uint64(0), math.NaN()},
		},
	}
	var b bytes.Buffer
	if err := r.Write(&b, "csv"); err != nil {
		t.Fatal(err)
	}
	if want := "bucket,topic,events,pct\n2026-01-15 10:01:00,obs,3,12.5\n2026-01-15 10:02:00,\"a,b\",0,NaN\n"; b.String() != want {
		t.Errorf("csv:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := r.Write(&b, "table"); err != nil {
		t.Fatal(err)
	}
	if want := "bucket               topic  events  pct\n2026-01-15 10:01:00  obs    3       12.5\n2026-01-15 10:02:00  a,b    0       NaN\n"; b.String() != want {
		t.Errorf("table:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	if err := r.Write(&b, "json"); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("json output does not parse: %v\n%s", err, b.String())
	}
	if len(got) != 2 || got[0]["bucket"] != "2026-01-15T10:01:00Z" || got[0]["events"] != 3.0 || got[1]["pct"] != nil {
		t.Errorf("json: %s", b.String())
	}
	if !bytes.HasPrefix(b.Bytes(), []byte("[\n  {\"bucket\"")) {
		t.Errorf("json keys must keep the column order: %s", b.String())
	}
	if err := r.Write(&b, "xml"); err == nil {
		t.Error("unknown format accepted")
	}
}
