package eventspb

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
)

// The versions schemas/gen.sh pins; the committed header records them.
const (
	wantProtoc      = "libprotoc 3.21.12"
	wantProtocGenGo = "protoc-gen-go v1.36.12"
)

// TestGeneratedMatchesProto compiles the .proto with protoc and checks that
// the descriptor embedded in events.pb.go is the same schema, so nobody can
// edit one without regenerating the other. With the pinned protoc-gen-go
// available it also regenerates the file and compares bytes.
func TestGeneratedMatchesProto(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not installed (apt-get install -y protobuf-compiler); the golden tests still guard the generated code")
	}
	set := filepath.Join(t.TempDir(), "events.pb")
	cmd := exec.Command(protoc, "-I", "..", "--descriptor_set_out="+set, "asyncwebrl/v1/events.proto")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(set)
	if err != nil {
		t.Fatal(err)
	}
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &fds); err != nil {
		t.Fatalf("unable to read protoc output: %v", err)
	}
	if len(fds.File) != 1 {
		t.Fatalf("protoc produced %d files, want 1", len(fds.File))
	}
	fromProto := fds.File[0]
	committed := protodesc.ToFileDescriptorProto(File_asyncwebrl_v1_events_proto)
	if !proto.Equal(fromProto, committed) {
		fd, err := protodesc.NewFile(fromProto, nil)
		if err != nil {
			t.Fatalf("events.proto differs from events.pb.go (and does not build: %v); run schemas/gen.sh", err)
		}
		breaks, added := compare(takeSnapshot(File_asyncwebrl_v1_events_proto).entries, takeSnapshot(fd))
		t.Fatalf("events.proto differs from events.pb.go; run schemas/gen.sh\nchanged/removed in .proto: %q\nadded in .proto: %q", breaks, added)
	}

	t.Run("bytes", func(t *testing.T) {
		gen := protocGenGo()
		if gen == "" {
			t.Skip("protoc-gen-go not installed; see schemas/gen.sh")
		}
		if v := version(t, protoc); v != wantProtoc {
			t.Skipf("%s installed, byte comparison needs %s", v, wantProtoc)
		}
		if v := version(t, gen); v != wantProtocGenGo {
			t.Skipf("%s installed, byte comparison needs %s", v, wantProtocGenGo)
		}
		out := t.TempDir()
		cmd := exec.Command("bash", filepath.Join("..", "gen.sh"), out)
		cmd.Env = append(os.Environ(), "PROTOC_GEN_GO="+gen)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gen.sh: %v\n%s", err, b)
		}
		got, err := os.ReadFile(filepath.Join(out, "schemas", "eventspb", "events.pb.go"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile("events.pb.go")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatal("events.pb.go differs from freshly generated code; run schemas/gen.sh")
		}
	})
}

// TestGeneratedPythonMatchesProto regenerates the Python bindings
// (analytics/python/asyncwebrl/v1/events_pb2.py) with gen.sh and the pinned
// protoc and compares bytes with the committed file: the .proto files are
// the one source of both languages. protoc alone is needed.
func TestGeneratedPythonMatchesProto(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not installed (apt-get install -y protobuf-compiler)")
	}
	if v := version(t, protoc); v != wantProtoc {
		t.Skipf("%s installed, byte comparison needs %s", v, wantProtoc)
	}
	out := t.TempDir()
	cmd := exec.Command("bash", filepath.Join("..", "gen.sh"), out)
	cmd.Env = append(os.Environ(), "GEN_LANGS=python")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen.sh: %v\n%s", err, b)
	}
	const rel = "analytics/python/asyncwebrl/v1/events_pb2.py"
	got, err := os.ReadFile(filepath.Join(out, rel))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from freshly generated code; run schemas/gen.sh", rel)
	}
}

func protocGenGo() string {
	if p := os.Getenv("PROTOC_GEN_GO"); p != "" {
		return p
	}
	if p, err := exec.LookPath("protoc-gen-go"); err == nil {
		return p
	}
	runDir := os.Getenv("ASYNCWEBRL_RUN_DIR")
	if runDir == "" {
		runDir = filepath.Join("..", "..", ".run")
	}
	if p := filepath.Join(runDir, "bin", "protoc-gen-go"); fileExists(p) {
		return p // where infra/setup.sh protoc installs it
	}
	return ""
}

func version(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	return strings.TrimSpace(string(out))
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
