package joiner

import (
	"bytes"
	"strings"
	"testing"
)

// TestChangelogRefersToPayloads: the changelog names pending records
// instead of copying them, a restored machine refuses to join until their
// bytes are read back, refuses the wrong record, and once filled joins
// exactly as the machine it replaces.
func TestChangelogRefersToPayloads(t *testing.T) {
	recs := benchRecords(60)
	orig, err := NewMachine(0, DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	changelog := map[string][]byte{}
	log := inputLog{}
	const cut = 2 // obs 0 and action 0: both pending
	for _, r := range recs[:cut] {
		log.add(r)
		orig.Apply(r)
	}
	out, err := orig.Take()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range out.Changelog {
		changelog[c.Key] = c.Value
		if bytes.Contains(c.Value, recs[0].Value) {
			t.Fatalf("changelog record %s copies the pending observation's bytes", c.Key)
		}
	}

	m, err := NewMachine(0, DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range sortedKeys(changelog) {
		if err := m.Restore(k, changelog[k]); err != nil {
			t.Fatal(err)
		}
	}
	missing := m.MissingPayloads()
	if len(missing) != cut {
		t.Fatalf("restored machine misses %d payloads, want %d: %+v", len(missing), cut, missing)
	}
	if _, err := m.Take(); err == nil || !strings.Contains(err.Error(), "lack their record") {
		t.Fatalf("Take before the payloads are filled: err = %v, want a refusal", err)
	}
	// The action's bytes at the observation's source: another event.
	var obsSrc Source
	for _, s := range missing {
		if s.Topic == recs[0].Source.Topic {
			obsSrc = s
		}
	}
	if err := m.FillPayload(obsSrc, recs[1].Value); err == nil {
		t.Fatal("FillPayload accepted the wrong record")
	}
	if err := log.fill(m); err != nil {
		t.Fatal(err)
	}
	if n := len(m.MissingPayloads()); n != 0 {
		t.Fatalf("%d payloads still missing after fill", n)
	}

	for _, r := range recs[cut:] {
		orig.Apply(r)
		m.Apply(r)
	}
	want, err := orig.Take()
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Take()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Transitions) == 0 || len(got.Transitions) != len(want.Transitions) {
		t.Fatalf("restored machine emitted %d transitions, the original %d", len(got.Transitions), len(want.Transitions))
	}
	for i := range want.Transitions {
		wb, err := want.MarshalTransition(i, 0)
		if err != nil {
			t.Fatal(err)
		}
		gb, err := got.MarshalTransition(i, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(wb, gb) {
			t.Fatalf("transition %d differs after restore", i)
		}
	}
}

// TestEpisodeSummaryCarriesScores: an episode's summary carries its done
// reward's raw and decayed rewards, from a machine that ran throughout and
// from one restored from the changelog just before the done reward.
func TestEpisodeSummaryCarriesScores(t *testing.T) {
	recs := benchRecords(25) // one episode: 9 obs, 8 actions, 8 rewards
	const cut = 23           // up to the done reward (step 7's)
	orig, err := NewMachine(0, DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	log := inputLog{}
	for _, r := range recs[:cut] {
		log.add(r)
		orig.Apply(r)
	}
	out, err := orig.Take()
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Episodes) != 0 {
		t.Fatalf("%d summaries before the done reward", len(out.Episodes))
	}
	m, err := NewMachine(0, DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	changelog := map[string][]byte{}
	for _, c := range out.Changelog {
		changelog[c.Key] = c.Value
	}
	for _, k := range sortedKeys(changelog) {
		if err := m.Restore(k, changelog[k]); err != nil {
			t.Fatal(err)
		}
	}
	if err := log.fill(m); err != nil {
		t.Fatal(err)
	}
	for name, mach := range map[string]*Machine{"original": orig, "restored": m} {
		mach.Apply(recs[cut])
		got, err := mach.Take()
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Episodes) != 1 {
			t.Fatalf("%s: %d summaries, want 1", name, len(got.Episodes))
		}
		if ep := got.Episodes[0]; ep.GetRawReward() != 0.5 || ep.GetDecayedReward() != 0.25 {
			t.Errorf("%s: summary raw %v decayed %v, want the done reward's 0.5 and 0.25", name, ep.GetRawReward(), ep.GetDecayedReward())
		}
	}
}
