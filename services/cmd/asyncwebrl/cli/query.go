package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
)

const queryUsage = `Usage: asyncwebrl query [NAME [--since 1h|RFC3339] [--until RFC3339] [--bucket 5m] [--run PREFIX] [--format table|csv|json] [flags]]
  Runs a saved query of analytics/queries on ClickHouse (-clickhouse-addr,
  -clickhouse-database, -clickhouse-user, ASYNCWEBRL_CLICKHOUSE_PASSWORD).
  Without NAME, lists the saved queries. analytics/README.md documents each.
  --since    start of the window: a duration back from now (30m, 1h, 7d) or an RFC 3339 time (default 1h)
  --until    end of the window, RFC 3339 (default now)
  --bucket   width of the time buckets of the *_over_time, throughput and learning_curve queries
             (default: the window divided into at most 120 buckets, at least 1m)
  --run      only the rows of this run: its topic prefix, e.g. run-20261201-170234. (default: every run)
  --format   table (default), csv or json
`

func runQuery(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-help" || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
		fmt.Fprint(stdout, queryUsage)
		return nil
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return listQueries(stdout)
	}
	name := args[0]
	q, err := analytics.LookupQuery(name)
	if err != nil {
		return cmdkit.Usage(err)
	}
	vals, rest, err := cmdkit.SubFlags(args[1:], []string{"since", "until", "bucket", "run", "format"}, nil)
	if err != nil {
		return cmdkit.Usage(err)
	}
	now := time.Now().UTC()
	p, format, err := queryParams(vals, now)
	if err != nil {
		return cmdkit.Usage(err)
	}
	cfg, err := cmdkit.Parse(rest, stdout)
	if err != nil {
		return err
	}
	ch := cmdkit.ClickHouse(cfg)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	conn, err := analytics.Open(ctx, ch)
	if err != nil {
		if analytics.IsUnknownDatabase(err) {
			return fmt.Errorf("database %s does not exist on %s: run the recorder first (it creates and migrates it), or pass -clickhouse-database", ch.Database, ch.Addr)
		}
		return err
	}
	defer conn.Close()
	res, err := analytics.Run(ctx, conn, q, p)
	if err != nil {
		return err
	}
	return res.Write(stdout, format)
}

// queryParams reads --since, --until, --bucket, --run and --format.
func queryParams(vals map[string]string, now time.Time) (analytics.Params, string, error) {
	p := analytics.Params{Since: now.Add(-time.Hour), Until: now}
	if s, ok := vals["until"]; ok {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return p, "", fmt.Errorf("invalid --until %q: want an RFC 3339 time like 2026-01-15T10:00:00Z", s)
		}
		p.Until = t
	}
	if s, ok := vals["since"]; ok {
		t, err := sinceTime(s, p.Until)
		if err != nil {
			return p, "", err
		}
		p.Since = t
	} else {
		p.Since = p.Until.Add(-time.Hour)
	}
	if !p.Since.Before(p.Until) {
		return p, "", fmt.Errorf("invalid window: --since %s is not before --until %s", p.Since.Format(time.RFC3339), p.Until.Format(time.RFC3339))
	}
	if s, ok := vals["bucket"]; ok {
		d, err := parseDays(s)
		if err != nil || d < time.Minute || d%time.Minute != 0 {
			return p, "", fmt.Errorf("invalid --bucket %q: want whole minutes, like 1m, 5m or 1h", s)
		}
		p.Bucket = d
	}
	p.Run = vals["run"]
	format := "table"
	if f, ok := vals["format"]; ok {
		if !slices.Contains(analytics.Formats, f) {
			return p, "", fmt.Errorf("invalid --format %q: want table, csv or json", f)
		}
		format = f
	}
	return p, format, nil
}

// sinceTime reads --since: a duration back from until (30m, 1h, 7d) or an
// RFC 3339 time.
func sinceTime(s string, until time.Time) (time.Time, error) {
	if d, err := parseDays(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("invalid --since %q: the duration must be positive", s)
		}
		return until.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid --since %q: want a duration (30m, 1h, 7d) or an RFC 3339 time", s)
	}
	return t, nil
}

// parseDays is time.ParseDuration plus a "d" (24h) suffix.
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		d, err := time.ParseDuration(n + "h")
		return 24 * d, err
	}
	return time.ParseDuration(s)
}

func listQueries(w io.Writer) error {
	qs, err := analytics.Queries()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUERY\tWHAT")
	for _, q := range qs {
		fmt.Fprintf(tw, "%s\t%s\n", q.Name, q.Summary)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nRun one with: asyncwebrl query NAME [--since 1h] [--format table|csv|json]  (asyncwebrl query -help)")
	return nil
}
