package cli

import (
	"testing"
	"time"
)

func TestParseDrillFlags(t *testing.T) {
	d, rest, err := parseDrillFlags([]string{"--schedule", "recorder@1m,broker@5s", "--down=3s", "-topic-partitions=4"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.schedule) != 2 || d.schedule[0] != (scheduled{"broker", 5 * time.Second}) || d.schedule[1] != (scheduled{"recorder", time.Minute}) {
		t.Errorf("schedule %+v, want broker@5s then recorder@1m", d.schedule)
	}
	if d.down != 3*time.Second || d.tail != 15*time.Second || d.members != 2 || d.nodes != 3 {
		t.Errorf("flags %+v", d)
	}
	if len(rest) != 1 || rest[0] != "-topic-partitions=4" {
		t.Errorf("rest %v, want the binary's flag", rest)
	}
	for _, bad := range [][]string{
		{"--schedule", "actor@5s"}, // real actors are not drilled yet
		{"--schedule", "broker"},
		{"--schedule", "clickhouse@5s"}, // the shared server is never stopped
		{"--synthetic=maybe"},
		{"--executors", "0"},
		{"--down", "-1s"},
		{"--nodes", "10"},
	} {
		if _, _, err := parseDrillFlags(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if _, _, err := parseDrillFlags([]string{"--schedule", "clickhouse@5s", "--private-clickhouse"}); err != nil {
		t.Errorf("clickhouse fault on a private server: %v", err)
	}
	// Real actors: their own default schedule, with the actor's faults.
	d, _, err = parseDrillFlags([]string{"--synthetic=false", "--executors=2"})
	if err != nil {
		t.Fatal(err)
	}
	if !d.real || d.executors != 2 || len(d.schedule) != 5 || d.schedule[3].name != "actor" || d.schedule[4].name != "chromium" {
		t.Errorf("real-actor flags %+v", d)
	}
}
