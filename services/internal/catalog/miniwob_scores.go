package catalog

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// The published per-task MiniWoB++ table: Synapse's Table 3 (Zheng et al.,
// ICLR 2024), which reproduces CC-Net's and the human baseline's figures
// (Humphreys et al., ICML 2022) for 104 tasks beside later methods. Its
// first line names the source; a cell is a task's score as printed (the
// mean raw reward of its episodes, in [−1, 1]) or n/a.
//
//go:embed miniwob_published.tsv
var miniwobPublishedTSV string

// StrictSuccess reports whether an episode's raw reward is MiniWoB++'s
// success, 1 (less float noise): a partly right answer (find-greatest's
// 0.1, click-checkboxes with one wrong box) is above 0 but not a success.
func StrictSuccess(raw float64) bool { return raw >= 1-1e-9 }

// Published columns the reports set beside this project's scores.
const (
	PublishedHuman = "Human"
	PublishedCCNet = "CCNet"
)

// PublishedScores is the published per-task table.
type PublishedScores struct {
	// Source is the citation, the table's first line.
	Source string
	// Columns are the methods, in the table's order.
	Columns []string
	// Scores holds per task (without "miniwob/") and column the printed
	// score; an n/a cell is absent.
	Scores map[string]map[string]float64
}

// Score is task's published score in column, if the table reports one.
func (p *PublishedScores) Score(task, column string) (float64, bool) {
	v, ok := p.Scores[strings.TrimPrefix(task, MiniWoBPrefix)][column]
	return v, ok
}

// Cell is task's published score in column as a table prints it ("0.93"),
// or "-" when the table does not report one.
func (p *PublishedScores) Cell(task, column string) string {
	if v, ok := p.Score(task, column); ok {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return "-"
}

var (
	publishedOnce sync.Once
	published     *PublishedScores
)

// MiniWoBPublishedScores is the published table, parsed once. The table is
// part of the binary, so a malformed one is a programming error: its unit
// test parses it.
func MiniWoBPublishedScores() *PublishedScores {
	publishedOnce.Do(func() {
		p, err := parsePublished(miniwobPublishedTSV)
		if err != nil {
			panic(err)
		}
		published = p
	})
	return published
}

// PublishedNotServed are the published table's tasks that MiniWoB++ 1.1 has no
// page for (drag-item, beside drag-items, is from the original MiniWoB).
var PublishedNotServed = map[string]bool{"drag-item": true}

func parsePublished(tsv string) (*PublishedScores, error) {
	lines := strings.Split(strings.TrimRight(tsv, "\n"), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "# ") {
		return nil, fmt.Errorf("unable to read the published table: want a source line, a header and rows")
	}
	head := strings.Split(lines[1], "\t")
	if head[0] != "task" {
		return nil, fmt.Errorf("unable to read the published table: header starts %q, want task", head[0])
	}
	p := &PublishedScores{Source: strings.TrimPrefix(lines[0], "# "), Columns: head[1:], Scores: map[string]map[string]float64{}}
	for i, line := range lines[2:] {
		cells := strings.Split(line, "\t")
		if len(cells) != len(head) {
			return nil, fmt.Errorf("unable to read the published table: line %d has %d cells, want %d", i+3, len(cells), len(head))
		}
		row := map[string]float64{}
		for j, c := range cells[1:] {
			if c == "n/a" {
				continue
			}
			v, err := strconv.ParseFloat(c, 64)
			if err != nil || v < -1 || v > 1 {
				return nil, fmt.Errorf("unable to read the published table: %s's %s is %q, want a score in [-1, 1] or n/a", cells[0], head[j+1], c)
			}
			row[head[j+1]] = v
		}
		p.Scores[cells[0]] = row
	}
	return p, nil
}
