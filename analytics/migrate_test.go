package analytics

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestSplitStatements(t *testing.T) {
	sql := `-- a comment; with a semicolon;
CREATE TABLE a (x String) ENGINE = Memory;
   -- indented comment
CREATE TABLE b (
    s String DEFAULT 'x;y'
) ENGINE = Memory;   
SELECT 1`
	got := SplitStatements(sql)
	want := []string{
		"CREATE TABLE a (x String) ENGINE = Memory",
		"CREATE TABLE b (\n    s String DEFAULT 'x;y'\n) ENGINE = Memory",
		"SELECT 1",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("SplitStatements =\n%q\nwant\n%q", got, want)
	}
}

func TestMigrationsLoad(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 3 {
		t.Fatalf("%d migrations, want at least 3", len(ms))
	}
	for i, m := range ms {
		if m.Version != uint32(i+1) {
			t.Errorf("migration %d has version %d: versions must be 1, 2, 3...", i, m.Version)
		}
		for _, s := range m.Statements {
			// 18.16 and current ClickHouse both: the quirks the server
			// rejects must not creep in.
			for _, bad := range []string{"LowCardinality", "CODEC(", "DateTime64", " TTL ", "Bool,", "IF NOT EXISTS " + "COLUMN"} {
				if strings.Contains(s, bad) {
					t.Errorf("migration %04d_%s uses %q, which ClickHouse 18.16 rejects", m.Version, m.Name, bad)
				}
			}
			if !strings.Contains(s, "{db}.") {
				t.Errorf("migration %04d_%s has a statement without {db}: %.60s", m.Version, m.Name, s)
			}
		}
	}
}

// fromTable is a FROM that names a table (not a subquery).
var fromTable = regexp.MustCompile(`FROM [a-z_]`)

func TestSavedQueriesDocumented(t *testing.T) {
	qs, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) == 0 {
		t.Fatal("no saved queries")
	}
	for _, q := range qs {
		if q.Summary == "" || q.Description == "" {
			t.Errorf("saved query %s has no leading comment (summary line + description)", q.Name)
		}
		if !strings.Contains(q.SQL, "@since") || !strings.Contains(q.SQL, "@until") {
			t.Errorf("saved query %s ignores the window (@since/@until)", q.Name)
		}
		// Every table holds every run: a query that reads one without
		// the run filter mixes runs (`asyncwebrl query --run`).
		if len(fromTable.FindAllString(q.SQL, -1)) > strings.Count(q.SQL, "(@run = '' OR run = @run)") {
			t.Errorf("saved query %s reads a table without the run filter (@run = '' OR run = @run)", q.Name)
		}
	}
	if _, err := LookupQuery("nope"); err == nil || !strings.Contains(err.Error(), "throughput") {
		t.Errorf("LookupQuery(nope) = %v, want an error listing the queries", err)
	}
}

func TestAutoBucket(t *testing.T) {
	cases := map[time.Duration]time.Duration{
		time.Minute:          time.Minute,
		2 * time.Hour:        time.Minute,
		2*time.Hour + 1:      2 * time.Minute,
		24 * time.Hour:       15 * time.Minute,
		30 * 24 * time.Hour:  6 * time.Hour,
		365 * 24 * time.Hour: 24 * time.Hour,
	}
	for window, want := range cases {
		if got := AutoBucket(window); got != want {
			t.Errorf("AutoBucket(%s) = %s, want %s", window, got, want)
		}
	}
}
