package loadtest

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Verdict is one topic's or one ClickHouse table's count after a run:
// what must be there, how much of it is, what is missing and what is there
// beyond it. For the inputs of real actors, Cut is apart from all of them:
// events a killed producer may have sent and the broker never acknowledged
// (Traffic.Cut), neither expected nor lost.
type Verdict struct {
	Name                                   string
	Expected, Found, Lost, Duplicated, Cut int
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

// PrintVerdicts writes vs as a table under a title column named what;
// with cut, a column of the cut tails too.
func PrintVerdicts(w io.Writer, what string, vs []Verdict, cut bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "%s\texpected\tfound\tlost\tduplicated\t"
	if cut {
		head += "cut (not lost)\t"
	}
	fmt.Fprintf(tw, head+"\t\n", what)
	for _, v := range vs {
		mark := "ok"
		if !v.OK() {
			mark = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t", v.Name, v.Expected, v.Found, v.Lost, v.Duplicated)
		if cut {
			fmt.Fprintf(tw, "%d\t", v.Cut)
		}
		fmt.Fprintf(tw, "%s\t\n", mark)
	}
	_ = tw.Flush()
}
