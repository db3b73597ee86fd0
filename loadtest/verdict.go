package loadtest

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Verdict is one topic's or one ClickHouse table's count after a run:
// what must be there, how much of it is, what is missing and what is there
// beyond it.
type Verdict struct {
	Name                              string
	Expected, Found, Lost, Duplicated int
}

// OK: nothing lost, nothing duplicated, everything found.
func (v Verdict) OK() bool { return v.Lost == 0 && v.Duplicated == 0 && v.Found == v.Expected }

// Verdicts are the joiner's output topics as Verify counted them:
// transitions, episodes and dead letters (the malformed records').
func (r Report) Verdicts() []Verdict {
	return []Verdict{
		{Name: "transitions", Expected: r.Expected, Found: r.Found, Lost: r.Lost, Duplicated: r.Duplicated},
		{Name: "episodes", Expected: r.EpisodesExpected, Found: r.EpisodesFound, Lost: r.EpisodesLost, Duplicated: r.EpisodesDuplicated},
		{Name: "dlq", Expected: r.MalformedExpected, Found: r.MalformedInDLQ, Lost: r.MalformedExpected - r.MalformedInDLQ, Duplicated: r.DuplicatedDeadLetters},
	}
}

// Verdicts are the ClickHouse tables as AuditRecorder counted them: the
// distinct events each topic holds committed must all be in its table
// (expected, found, lost), and the table must hold no other event
// (duplicated: an aborted transaction's output, or a stray row; it counts
// the whole table, so it is exact when the database holds one run). Copies
// of one event, which a recorder re-inserts after a crash, collapse in the
// ReplacingMergeTree by design and are not counted.
func (a Audit) Verdicts() []Verdict {
	out := make([]Verdict, 0, len(a))
	for _, t := range a {
		out = append(out, Verdict{Name: t.Table, Expected: t.Committed, Found: t.Recorded, Lost: t.Committed - t.Recorded, Duplicated: max(0, t.Distinct-t.Recorded)})
	}
	return out
}

// PrintVerdicts writes vs as a table under a title column named what.
func PrintVerdicts(w io.Writer, what string, vs []Verdict) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\texpected\tfound\tlost\tduplicated\t\t\n", what)
	for _, v := range vs {
		mark := "ok"
		if !v.OK() {
			mark = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t\n", v.Name, v.Expected, v.Found, v.Lost, v.Duplicated, mark)
	}
	_ = tw.Flush()
}
