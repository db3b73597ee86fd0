package cmdkit

import (
	"strings"
	"testing"
)

func TestSubFlags(t *testing.T) {
	vals, rest, err := SubFlags([]string{"--since", "2h", "-clickhouse-addr", "h:1", "--format=csv", "-keep", "-log-level=debug"},
		[]string{"since", "format"}, []string{"keep"})
	if err != nil {
		t.Fatal(err)
	}
	if vals["since"] != "2h" || vals["format"] != "csv" || vals["keep"] != "true" {
		t.Errorf("vals = %v", vals)
	}
	if strings.Join(rest, " ") != "-clickhouse-addr h:1 -log-level=debug" {
		t.Errorf("rest = %v", rest)
	}
	if _, _, err := SubFlags([]string{"--since"}, []string{"since"}, nil); err == nil {
		t.Error("a flag without its value was accepted")
	}
}

// ArgGiven reads the command line only; FlagGiven the environment too.
func TestFlagGiven(t *testing.T) {
	args := []string{"-brokers=b:1", "--max-tier", "easy", "topic-replication"}
	for name, want := range map[string]bool{"brokers": true, "max-tier": true, "topic-replication": false, "suite": false} {
		if got := ArgGiven(args, name); got != want {
			t.Errorf("ArgGiven(%s) = %v, want %v", name, got, want)
		}
	}
	t.Setenv("ASYNCWEBRL_SUITE", "")
	t.Setenv("ASYNCWEBRL_TOPIC_REPLICATION", "3")
	if ArgGiven(args, "topic-replication") || !FlagGiven(args, "topic-replication") || !FlagGiven(args, "brokers") || FlagGiven(args, "suite") {
		t.Error("FlagGiven does not read the environment beside the command line")
	}
	if !HelpAsked([]string{"--help", "x"}) || !HelpAsked([]string{"-h"}) || HelpAsked(nil) || HelpAsked([]string{"x", "-help"}) {
		t.Error("HelpAsked reads more than the first argument")
	}
}
