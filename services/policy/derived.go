package policy

import (
	"regexp"
	"strconv"
	"strings"
)

// derivedValues are the text candidates a page states only in another
// form, so copying alone cannot type them (the audit's last inexpressible
// MiniWoB++ steps): each quoted phrase in lower and in upper case when the
// instruction speaks of letter case (enter-text-2: "all upper case
// letters"), and the value of each
// arithmetic problem the instruction or the page's text states (a sum to
// compute, "x - 4 = 7" to solve: simple-arithmetic, simple-algebra). The
// arithmetic is a calculator written for those two tasks: a task-specific
// feature, and ARCHITECTURE.md lists it as one.
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
	return out
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
