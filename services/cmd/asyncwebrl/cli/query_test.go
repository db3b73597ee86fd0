package cli

import (
	"strings"
	"testing"
	"time"
)

func TestQueryParams(t *testing.T) {
	now := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	p, format, err := queryParams(map[string]string{}, now)
	if err != nil || format != "table" || !p.Since.Equal(now.Add(-time.Hour)) || !p.Until.Equal(now) || p.Bucket != 0 {
		t.Fatalf("defaults: %+v %q %v", p, format, err)
	}
	if p.Run != "" {
		t.Fatalf("default run %q, want every run", p.Run)
	}
	p, format, err = queryParams(map[string]string{"since": "7d", "format": "json", "bucket": "1h", "run": "run-1."}, now)
	if err != nil || format != "json" || !p.Since.Equal(now.Add(-7*24*time.Hour)) || p.Bucket != time.Hour || p.Run != "run-1." {
		t.Fatalf("7d/json/1h: %+v %q %v", p, format, err)
	}
	p, _, err = queryParams(map[string]string{"since": "2026-01-15T09:55:00Z", "until": "2026-01-15T10:10:00Z"}, now)
	if err != nil || p.Since.Format(time.RFC3339) != "2026-01-15T09:55:00Z" || p.Until.Format(time.RFC3339) != "2026-01-15T10:10:00Z" {
		t.Fatalf("fixed window: %+v %v", p, err)
	}
	for _, bad := range []map[string]string{
		{"since": "yesterday"}, {"since": "-1h"}, {"until": "noon"}, {"format": "xml"}, {"bucket": "90s"},
		{"since": "2026-01-15T13:00:00Z"}, // after until (now)
	} {
		if _, _, err := queryParams(bad, now); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("queryParams(%v) = %v, want a one-line error", bad, err)
		}
	}
}
