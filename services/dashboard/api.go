package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/asyncwebrl/asyncwebrl/analytics"
)

// Chart is one chart of the page: the saved query behind it and how its
// rows become lines (one per distinct series value, x a time column).
type Chart struct {
	ID     string  `json:"id"`
	Title  string  `json:"title"`
	Query  string  `json:"query"`
	X      string  `json:"x"`
	Series string  `json:"series"` // column names, comma-separated: one line per combination of their values
	Y      string  `json:"y"`
	Unit   string  `json:"unit"`
	YMax   float64 `json:"y_max,omitempty"` // fixed top of the y axis (percentages); 0: from the data
}

// Charts are the page's charts, in page order.
var Charts = []Chart{
	{ID: "learning", Title: "Learning curve: success rate by tier and kind (sample: training, greedy: held-out)", Query: "learning_curve", X: "bucket", Series: "tier,kind", Y: "success_pct", Unit: "%", YMax: 100},
	{ID: "throughput", Title: "Throughput by topic", Query: "throughput", X: "bucket", Series: "topic", Y: "events_per_s", Unit: "events/s"},
	{ID: "utilization", Title: "Executor utilization by phase", Query: "utilization_over_time", X: "bucket", Series: "phase", Y: "pct", Unit: "%", YMax: 100},
	{ID: "lag", Title: "Consumer lag by group", Query: "lag_over_time", X: "bucket", Series: "group_id", Y: "lag_records", Unit: "records"},
}

// chartData is one chart's answer: the rows, or the error that replaced them.
type chartData struct {
	Chart
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	Error   string   `json:"error,omitempty"`
}

type response struct {
	GeneratedAt string      `json:"generated_at"`
	Since       string      `json:"since"`
	Until       string      `json:"until"`
	BucketS     int64       `json:"bucket_s"`
	RefreshMs   int64       `json:"refresh_ms"`
	Database    string      `json:"database"`
	Run         string      `json:"run"` // the run shown (topic prefix); empty: every run
	Charts      []chartData `json:"charts"`
	Error       string      `json:"error,omitempty"`
}

// maxWindow bounds what one request may ask the server to scan.
const maxWindow = 90 * 24 * time.Hour

// window reads the time window: ?window=1h (ending now, the default), or
// ?since=RFC3339[&until=RFC3339] for a fixed one (links to an incident).
func window(r *http.Request, now time.Time) (since, until time.Time, err error) {
	q := r.URL.Query()
	until = now
	if s := q.Get("until"); s != "" {
		if until, err = time.Parse(time.RFC3339, s); err != nil {
			return since, until, fmt.Errorf("invalid until %q: want RFC 3339", s)
		}
	}
	switch s := q.Get("since"); {
	case s != "":
		if since, err = time.Parse(time.RFC3339, s); err != nil {
			return since, until, fmt.Errorf("invalid since %q: want RFC 3339", s)
		}
	default:
		w := time.Hour
		if v := q.Get("window"); v != "" {
			if w, err = time.ParseDuration(v); err != nil || w <= 0 {
				return since, until, fmt.Errorf("invalid window %q: want a duration like 15m, 1h or 24h", v)
			}
		}
		since = until.Add(-w)
	}
	if !since.Before(until) || until.Sub(since) > maxWindow {
		return since, until, fmt.Errorf("invalid window %s..%s: since must be before until, at most %s apart", since.Format(time.RFC3339), until.Format(time.RFC3339), maxWindow)
	}
	return since, until, nil
}

func (d *Dashboard) serveCharts(w http.ResponseWriter, r *http.Request) {
	now := time.Now().UTC()
	since, until, err := window(r, now)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, response{GeneratedAt: now.Format(time.RFC3339), Error: err.Error()})
		return
	}
	// ?run=PREFIX shows one run (the tables' run column); empty: all.
	run := r.URL.Query().Get("run")
	p := analytics.Params{Since: since, Until: until, Bucket: analytics.AutoBucket(until.Sub(since)), Run: run}
	resp := response{
		GeneratedAt: now.Format(time.RFC3339), Since: since.UTC().Format(time.RFC3339), Until: until.UTC().Format(time.RFC3339),
		BucketS: int64(p.Bucket / time.Second), RefreshMs: d.refresh.Milliseconds(), Database: d.ch.Database, Run: run,
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	conn, err := d.connection(ctx)
	if err != nil {
		resp.Error = err.Error()
		writeJSON(w, http.StatusServiceUnavailable, resp)
		return
	}
	resp.Charts = make([]chartData, len(Charts))
	var wg sync.WaitGroup
	failed := false
	var mu sync.Mutex
	for i, c := range Charts {
		resp.Charts[i].Chart = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			cd := &resp.Charts[i]
			q, err := analytics.LookupQuery(c.Query)
			if err == nil {
				var res *analytics.Result
				if res, err = analytics.Run(ctx, conn, q, p); err == nil {
					cd.Columns = res.Columns
					cd.Rows = make([][]any, len(res.Rows))
					for j, row := range res.Rows {
						out := make([]any, len(row))
						for k, v := range row {
							out[k] = analytics.JSONValue(v)
						}
						cd.Rows[j] = out
					}
					return
				}
			}
			cd.Error = err.Error()
			mu.Lock()
			failed = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	if failed {
		// Whatever broke (a restarted server), the next poll dials anew.
		d.dropConnection(conn)
		d.log.Warn("dashboard query failed", "err", firstError(resp.Charts))
	}
	writeJSON(w, http.StatusOK, resp)
}

func firstError(cs []chartData) string {
	for _, c := range cs {
		if c.Error != "" {
			return c.Error
		}
	}
	return ""
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
