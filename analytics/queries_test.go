package analytics

import (
	"io/fs"
	"strings"
	"testing"
)

func TestExpandFragments(t *testing.T) {
	got, err := expandFragments("SELECT n\nFROM\n(\n    {{throughput_per_minute}}\n)")
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT n\nFROM\n(\n" +
		"    SELECT minute, topic, producer, uniqExactMerge(events) AS n\n" +
		"    FROM throughput_1m\n" +
		"    WHERE minute >= toStartOfMinute(@since) AND minute < @until AND (@run = '' OR run = @run)\n" +
		"    GROUP BY minute, topic, producer\n)"
	if got != want {
		t.Errorf("expandFragments =\n%s\nwant\n%s", got, want)
	}
	// Only a line that holds nothing else stands for a fragment.
	for _, s := range []string{"SELECT '{{throughput_per_minute}}'", "x {{throughput_per_minute}}"} {
		if got, err := expandFragments(s); err != nil || got != s {
			t.Errorf("expandFragments(%q) = %q, %v; want it unchanged", s, got, err)
		}
	}
	if _, err := expandFragments("  {{no_such_fragment}}"); err == nil || !strings.Contains(err.Error(), "no_such_fragment") {
		t.Errorf("an unknown fragment: err %v, want one naming it", err)
	}
}

// Every fragment is used, and no saved query keeps a {{NAME}} line.
func TestQueryFragmentsUsed(t *testing.T) {
	entries, err := fs.ReadDir(queryFiles, "queries/fragments")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if strings.Contains(q.SQL, "{{") {
			t.Errorf("saved query %s keeps a fragment line", q.Name)
		}
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".sql")
		used := false
		for _, q := range qs {
			b, err := queryFiles.ReadFile("queries/" + q.Name + ".sql")
			if err != nil {
				t.Fatal(err)
			}
			used = used || strings.Contains(string(b), "{{"+name+"}}")
		}
		if !used {
			t.Errorf("fragment %s is used by no saved query", name)
		}
		if _, err := fragment(name); err != nil {
			t.Error(err)
		}
	}
}
