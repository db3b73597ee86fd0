package policy

import (
	"slices"
	"testing"
)

func TestSolveArithmetic(t *testing.T) {
	for _, c := range []struct {
		line, want string
		ok         bool
	}{
		{"3 + 5 =", "8", true},
		{"9 - 12 =", "-3", true},
		{"7 x 6 =", "42", true},
		{"8 / 2 = ?", "4", true},
		{"x + 4 = 11", "7", true},
		{"x - 4 = 7", "11", true},
		{"5 - x = 2", "3", true},
		{"3 + x = 1", "-2", true},
		{"x x 4 = 12", "3", true},
		{"4 x x = 10", "", false}, // not an integer
		{"7 / 2 =", "", false},
		{"x / 0 = 3", "", false},
		{"6 / x = 0", "", false},
		{"x + x = 4", "", false},
		{"x + 4 =", "", false},
		{"3 + 5 = 8", "", false}, // stated, not asked
		{"Solve 3 + 5 =", "", false},
		{"", "", false},
	} {
		got, ok := solveArithmetic(c.line)
		if got != c.want || ok != c.ok {
			t.Errorf("solveArithmetic(%q) = %q, %v; want %q, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

func TestDerivedValues(t *testing.T) {
	got := derivedValues(`Type "Blue fox" in all lower case letters.`, []string{"Blue fox"}, []string{"2 + 2 ="})
	if want := []string{"blue fox", "BLUE FOX", "4"}; !slices.Equal(got, want) {
		t.Fatalf("derived %q, want %q", got, want)
	}
	// No case asked for: the quoted phrase stands alone.
	if got := derivedValues(`Click on the "Yes" button.`, []string{"Yes"}, nil); len(got) != 0 {
		t.Fatalf("derived %q for a click", got)
	}
	// The numbers an answer may be: a named range's, or a count's.
	for instr, want := range map[string][]string{
		"Guess the number between 0-9 and press Submit.":                {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"},
		"Pick a number from 3 to 5.":                                    {"3", "4", "5"},
		"Type the total number of blocks into the textbox.":             {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20"},
		"Enter a year between 1900 and 2024.":                           nil, // too wide to list
		"Enter a year between 1900 and 2024, and the number of guests.": {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20"},
		"Select 9 from the list and press Submit.":                      nil,
		"Select maroon with the color picker and hit Submit.":           {"800000"},
		"Click on the red button.":                                      nil, // no colour asked for
	} {
		if got := derivedValues(instr, nil, nil); !slices.Equal(got, want) {
			t.Errorf("%q: derived %q, want %q", instr, got, want)
		}
	}
}

func FuzzSolveArithmetic(f *testing.F) {
	for _, s := range []string{"3 + 5 =", "x - 4 = 7", "5 - x = 2", "-999999999 x -999999999 =", "x / 0 = 0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if v, ok := solveArithmetic(line); ok && v == "" {
			t.Fatalf("%q solved to an empty value", line)
		}
	})
}
