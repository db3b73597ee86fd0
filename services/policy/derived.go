package policy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/image/colornames"

	"github.com/asyncwebrl/asyncwebrl/services/internal/instruction"
)

// derivedValues are the text candidates a page states only in another
// form, so copying alone cannot type them (the audit's last inexpressible
// MiniWoB++ steps): each quoted phrase in lower and in upper case when the
// instruction speaks of letter case (enter-text-2: "all upper case
// letters"), and the value of each
// arithmetic problem the instruction or the page's text states (a sum to
// compute, "x - 4 = 7" to solve: simple-arithmetic, simple-algebra). The
// arithmetic is a calculator written for those two tasks: a task-specific
// feature, and ARCHITECTURE.md lists it as one. Last come the numbers an
// answer may be (features v18): the integers of a small range the
// instruction names ("between 0-9": guess-number's guesses), or, when it
// asks for a count ("the total number of blocks": visual-addition), 0 to
// maxCount. These are task-specific too: counting is the policy's to
// learn from the frame, the numbers only make it expressible.
func derivedValues(instr string, quotes, pageText []string) []string {
	var out []string
	for _, q := range quotes {
		if !asksForCase(instr) {
			// Two more distractors for every quoted phrase of every
			// page otherwise ("Click on the Yes button").
			break
		}
		for _, v := range []string{strings.ToLower(q), strings.ToUpper(q)} {
			if v != q {
				out = append(out, v)
			}
		}
	}
	for _, l := range append([]string{instr}, pageText...) {
		if v, ok := solveArithmetic(l); ok {
			out = append(out, v)
		}
	}
	lo, hi, ok := namedRange(instr)
	if !ok && asksForCount.MatchString(instr) {
		lo, hi, ok = 0, maxCount, true
	}
	for n := lo; ok && n <= hi; n++ {
		out = append(out, strconv.Itoa(n))
	}
	// A colour named in an instruction about colours, as the hex code a
	// colour field takes (use-colorwheel: "Select maroon with the color
	// picker"): the CSS names' table, which a person knows and the page
	// does not show.
	if speaksOfColour.MatchString(instr) {
		for _, w := range instruction.LowerWords(instr) {
			if c, ok := colornames.Map[w]; ok {
				out = append(out, fmt.Sprintf("%02x%02x%02x", c.R, c.G, c.B))
			}
		}
	}
	return out
}

// speaksOfColour matches an instruction about colours.
var speaksOfColour = regexp.MustCompile(`(?i)\bcolou?rs?\b`)

// maxCount is the largest count offered: visual-addition's two addends
// are at most 10 each.
const maxCount = 20

// numberRange is a range of integers an instruction names: "between 0-9",
// "from 1 to 10", "between 3 and 7".
var numberRange = regexp.MustCompile(`(?i)\b(?:between|from)\s+(-?\d{1,4})\s*(?:-|–|to|and)\s*(-?\d{1,4})\b`)

// asksForCount matches an instruction that asks for a number of things.
var asksForCount = regexp.MustCompile(`(?i)\b(?:how many|number of|total|count)\b`)

// namedRange returns the range of numberRange in instr when it holds at
// most maxCount+1 integers (a wider one is not a list of guesses).
func namedRange(instr string) (lo, hi int, ok bool) {
	m := numberRange.FindStringSubmatch(instr)
	if m == nil {
		return 0, 0, false
	}
	lo, _ = strconv.Atoi(m[1])
	hi, _ = strconv.Atoi(m[2])
	return lo, hi, lo < hi && hi-lo <= maxCount
}

// arithmeticProblem is "a op b =" or "a op b = c" with at most one operand
// the unknown x: the whole line, as MiniWoB++ draws its problems.
var arithmeticProblem = regexp.MustCompile(`^\s*(-?\d{1,9}|x)\s*([-+x×*/])\s*(-?\d{1,9}|x)\s*=\s*(-?\d{1,9}|\?)?\s*$`)

// solveArithmetic returns the integer value a problem line asks for: the
// result of "a op b =" (or "a op b = ?"), or the x of "x op a = b" and
// "a op x = b". A line that is no such problem, or whose answer is not an
// integer, gives false.
func solveArithmetic(line string) (string, bool) {
	m := arithmeticProblem.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	l, op, r, eq := m[1], m[2], m[3], m[4]
	num := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	switch {
	case l != "x" && r != "x" && (eq == "" || eq == "?"):
		return apply(num(l), op, num(r))
	case l != "x" && r != "x", eq == "" || eq == "?" || l == r:
		// Stated, not asked ("3 + 5 = 8"); or nothing to solve with.
		return "", false
	case l == "x": // x op a = c
		a, c := num(r), num(eq)
		switch op {
		case "+":
			return strconv.FormatInt(c-a, 10), true
		case "-":
			return strconv.FormatInt(c+a, 10), true
		case "x", "×", "*":
			if a != 0 && c%a == 0 {
				return strconv.FormatInt(c/a, 10), true
			}
		case "/":
			if a != 0 {
				return strconv.FormatInt(c*a, 10), true
			}
		}
	default: // a op x = c
		a, c := num(l), num(eq)
		switch op {
		case "+":
			return strconv.FormatInt(c-a, 10), true
		case "-":
			return strconv.FormatInt(a-c, 10), true
		case "x", "×", "*":
			if a != 0 && c%a == 0 {
				return strconv.FormatInt(c/a, 10), true
			}
		case "/":
			if c != 0 && a%c == 0 {
				return strconv.FormatInt(a/c, 10), true
			}
		}
	}
	return "", false
}

func apply(a int64, op string, b int64) (string, bool) {
	switch op {
	case "+":
		return strconv.FormatInt(a+b, 10), true
	case "-":
		return strconv.FormatInt(a-b, 10), true
	case "x", "×", "*":
		return strconv.FormatInt(a*b, 10), true
	case "/":
		if b != 0 && a%b == 0 {
			return strconv.FormatInt(a/b, 10), true
		}
	}
	return "", false
}

// caseWords are the words of an instruction that asks for a letter case.
var caseWords = map[string]bool{"case": true, "lowercase": true, "uppercase": true, "capital": true, "capitals": true, "capitalized": true, "capitalised": true}

func asksForCase(instr string) bool {
	for _, w := range strings.Fields(strings.ToLower(instr)) {
		if caseWords[strings.Trim(w, ".,;:!?\"'()")] {
			return true
		}
	}
	return false
}
