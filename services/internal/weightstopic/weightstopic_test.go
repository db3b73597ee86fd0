package weightstopic

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// record is a weights record of policy at version v; corrupt gives it a
// wrong sha256.
func record(t *testing.T, policy string, v uint64, corrupt bool) *kgo.Record {
	t.Helper()
	onnx := []byte{byte(v), 1, 2}
	sum := sha256.Sum256(onnx)
	if corrupt {
		sum[0] ^= 1
	}
	b, err := eventspb.Marshal(&eventspb.Weights{Envelope: eventspb.NewEnvelope("t"), PolicyName: policy, Version: v, Onnx: onnx, OnnxSha256: hex.EncodeToString(sum[:])})
	if err != nil {
		t.Fatal(err)
	}
	return &kgo.Record{Key: []byte(policy), Value: b}
}

// TestReaderAccept: without Version a reader takes newer versions only;
// with it, that one version whatever it already has (a checkpoint older
// than the newest), and never a corrupt record or another policy's.
func TestReaderAccept(t *testing.T) {
	bad := 0
	newest := &Reader{Policy: "p", Log: slog.New(slog.NewTextHandler(io.Discard, nil)), OnBad: func() { bad++ }}
	if _, ok := newest.Accept(record(t, "p", 3, false), 0, false); !ok {
		t.Error("the first version was refused")
	}
	if _, ok := newest.Accept(record(t, "p", 3, false), 3, true); ok {
		t.Error("a version not newer than the one held was taken")
	}
	if w, ok := newest.Accept(record(t, "p", 4, false), 3, true); !ok || w.GetVersion() != 4 {
		t.Error("a newer version was refused")
	}
	if _, ok := newest.Accept(record(t, "q", 9, false), 3, true); ok {
		t.Error("another policy's version was taken")
	}

	at := &Reader{Policy: "p", Log: newest.Log, OnBad: newest.OnBad, Version: 2}
	for _, tc := range []struct {
		v       uint64
		have    uint64
		haveAny bool
		want    bool
	}{
		{v: 1, want: false},
		{v: 2, want: true},
		{v: 2, have: 2, haveAny: true, want: true}, // republished: the later record wins
		{v: 2, have: 5, haveAny: true, want: true}, // older than what was read: still the one wanted
		{v: 3, have: 2, haveAny: true, want: false},
	} {
		if _, ok := at.Accept(record(t, "p", tc.v, false), tc.have, tc.haveAny); ok != tc.want {
			t.Errorf("Version 2: record v%d (have %d, %v): taken %v, want %v", tc.v, tc.have, tc.haveAny, ok, tc.want)
		}
	}
	if bad != 0 {
		t.Fatalf("%d good records counted bad", bad)
	}
	if _, ok := at.Accept(record(t, "p", 2, true), 0, false); ok || bad != 1 {
		t.Errorf("a corrupt record of the wanted version: taken %v, counted bad %d times", ok, bad)
	}
}
