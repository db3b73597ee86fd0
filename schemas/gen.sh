#!/usr/bin/env bash
# Regenerates the committed Go and Python code of schemas/ from the .proto
# files: the .proto files are the one source of both.
#
# Makefile:   gen:  ; schemas/gen.sh
# Usage:      [GEN_LANGS="go python"] schemas/gen.sh [OUT_ROOT]
#   OUT_ROOT defaults to the repository root; the generated files land in
#   OUT_ROOT/schemas/eventspb/events.pb.go (and joinstate.pb.go) and
#   OUT_ROOT/analytics/python/asyncwebrl/v1/events_pb2.py (the tests use a
#   temp OUT_ROOT to compare against the committed files). GEN_LANGS picks
#   the languages (default both); Python needs protoc alone.
#
# Tool versions (the generated header records them; keep them pinned so the
# committed code is reproducible byte for byte):
#   protoc        3.21.12   apt-get install -y protobuf-compiler   (Debian 12)
#   protoc-gen-go v1.36.12  infra/setup.sh protoc  (installs both; protoc-gen-go into .run/bin)
#                           (same version as google.golang.org/protobuf in go.mod)
# protoc's built-in Python generator writes code for the protobuf runtime
# pinned in analytics/python/requirements.txt (4.25.x reads 3.21 gencode).
# Only events.proto is emitted for Python: joinstate.proto is the joiner's
# private changelog format.
# protoc-gen-go is taken from $PROTOC_GEN_GO, else $PATH, else the run dir's bin/.
# Builds never need protoc: the generated code is committed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root}"
langs="${GEN_LANGS:-go python}"
want_protoc="libprotoc 3.21.12"
want_gen="protoc-gen-go v1.36.12"

command -v protoc >/dev/null || { echo "gen.sh: protoc not found (apt-get install -y protobuf-compiler)" >&2; exit 1; }
have_protoc="$(protoc --version)"
[[ "$have_protoc" == "$want_protoc" ]] || echo "gen.sh: warning: $have_protoc, want $want_protoc (output will differ)" >&2
mkdir -p "$out"

if [[ " $langs " == *" python "* ]]; then
  mkdir -p "$out/analytics/python"
  protoc -I "$root/schemas" --python_out="$out/analytics/python" asyncwebrl/v1/events.proto
fi
[[ " $langs " == *" go "* ]] || exit 0

gen="${PROTOC_GEN_GO:-$(command -v protoc-gen-go || true)}"
rundir_gen="${ASYNCWEBRL_RUN_DIR:-$root/.run}/bin/protoc-gen-go"
[[ -z "$gen" && -x "$rundir_gen" ]] && gen="$rundir_gen"
[[ -n "$gen" ]] || { echo "gen.sh: protoc-gen-go not found; install it with infra/setup.sh protoc" >&2; exit 1; }

have_gen="$("$gen" --version)"
[[ "$have_gen" == "$want_gen" ]] || { echo "gen.sh: $have_gen, want $want_gen" >&2; exit 1; }

protoc \
  --plugin=protoc-gen-go="$gen" \
  -I "$root/schemas" \
  --go_out="$out" \
  --go_opt=module=github.com/asyncwebrl/asyncwebrl \
  asyncwebrl/v1/events.proto asyncwebrl/v1/joinstate.proto
