package enum

import (
	"strconv"
	"testing"
)

type colour string

type level int

func (l level) String() string { return "level" + strconv.Itoa(int(l)) }

func TestParse(t *testing.T) {
	got, err := Parse("colour", " Red ", colour("red"), colour("green"))
	if err != nil || got != "red" {
		t.Fatalf("Parse(Red) = %q, %v", got, err)
	}
	_, err = Parse("colour", "blue", colour("red"), colour("green"), colour("cyan"))
	if err == nil || err.Error() != `unknown colour "blue": want red, green or cyan` {
		t.Fatalf("Parse(blue) error = %v", err)
	}
	l, err := ParseNamed("level", "LEVEL2", level(1), level(2))
	if err != nil || l != 2 {
		t.Fatalf("ParseNamed(LEVEL2) = %v, %v", l, err)
	}
	if _, err := ParseNamed("level", "level3", level(1), level(2)); err == nil || err.Error() != `unknown level "level3": want level1 or level2` {
		t.Fatalf("ParseNamed(level3) error = %v", err)
	}
}

func TestList(t *testing.T) {
	for n, want := range []string{"nothing", "a", "a or b", "a, b or c"} {
		if got := List([]string{"a", "b", "c"}[:n]...); got != want {
			t.Errorf("List of %d = %q, want %q", n, got, want)
		}
	}
}
