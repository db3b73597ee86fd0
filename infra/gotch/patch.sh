#!/usr/bin/env bash
# Makes a patched copy of gotch in .run/gotch that builds against Debian's CPU
# libtorch-dev instead of the libtorch 2.x + CUDA tree its lib.go expects;
# go.mod's `replace github.com/sugarme/gotch => ./.run/gotch` builds with it.
#   1. unpacks the module zip (downloaded by go, checked against the hash
#      pinned in common.sh) into a fresh directory;
#   2. rewrites libtch/lib.go's cgo lines for the system libtorch, CPU only;
#   3. stubs the generated C wrappers listed in stubs-<gotch version>.txt: they
#      call torch functions this libtorch lacks and would not compile; a stub
#      throws inside gotch's PROTECT(...), so calling it returns a Go error;
#   4. gives each op's output slot room and frees it (gotch's C.malloc(0)
#      leaked a chunk per op; README.md);
#   5. moves it into place and checks go sees the new cgo lines.
# The module cache is never edited (so `go mod verify` passes). The result
# depends only on the zip and the list. A stamp in the copy, keyed by this
# script, the list, the stub program and the libtorch version, makes a
# second run a no-op. We never commit gotch's source; see README.md.
set -euo pipefail
source "$(dirname "$0")/common.sh"

need_torch_headers
command -v go >/dev/null || die "gotch: go not found in PATH"
cd "$REPO_DIR"

version=$(gotch_version)
[ -n "$version" ] || die "gotch: $GOTCH_MODULE is not required in $REPO_DIR/go.mod"
sum=$(gotch_sum "$version") || die "gotch: no pinned hash for $version in $GOTCH_INFRA/common.sh (gotch_sum); add go.sum's h1 line for it"
list=$GOTCH_INFRA/stubs-$version.txt
[ -f "$list" ] || die "gotch: no stub list for $version ($list); generate it with infra/gotch/find-stubs.sh"
torch_version=$(libtorch_version)
key=$( {
  echo "gotch $version $sum libtorch $torch_version"
  cat "$0" "$GOTCH_INFRA/common.sh" "$list"
  find "$GOTCH_INFRA/stub" -name '*.go' ! -name '*_test.go' | sort | xargs cat
} | sha256sum | cut -c1-16)
# cgo_ok: the go command builds libtch from our copy, with our cgo lines (not
# gotch's CUDA ones from the module cache).
cgo_ok() {
  local got
  got=$(go list -f '{{.Dir}}|{{join .CgoLDFLAGS " "}}' "$GOTCH_MODULE/libtch" 2>/dev/null) || return 1
  [[ ${got%%|*} == "$GOTCH_DIR/libtch" && ${got#*|} == *-ltorch_cpu* && ${got#*|} != *cuda* ]]
}

stamp=$GOTCH_DIR/.asyncwebrl-patched
if [ "$(cat "$stamp" 2>/dev/null)" = "$key" ] && cgo_ok; then
  log "gotch: already patched ($GOTCH_DIR)"
  exit 0
fi

log "gotch: downloading $GOTCH_MODULE@$version"
zip=$(gotch_zip "$version") || die "gotch: unable to download $GOTCH_MODULE@$version"
new=$GOTCH_DIR.new
rm -rf "$new"
mkdir -p "$(dirname "$GOTCH_DIR")"
go run ./infra/gotch/stub extract -zip "$zip" -sum "$sum" -out "$new"
libtch=$new/libtch
[ -d "$libtch" ] || die "gotch: $zip has no libtch/"

# -g is left to CGO_CXXFLAGS (go's default "-O2 -g"); the package's -O3 follows
# and wins. The CUDA libraries and ${SRCDIR}/libtorch paths are gone: Debian's
# libtorch is CPU-only and lives on the default include and library paths.
cat >"$libtch/lib.go" <<GO
package libtch

// Rewritten by asyncwebrl's infra/gotch/patch.sh for Debian's CPU libtorch-dev $torch_version.

// #cgo CPPFLAGS: ${TORCH_CPPFLAGS[*]}
// #cgo CFLAGS: -I\${SRCDIR} -O3 -Wall -Wno-unused-variable -Wno-deprecated-declarations -Wno-c++11-narrowing -Wno-sign-compare -Wno-unused-function
// #cgo CXXFLAGS: ${TORCH_CXXFLAGS[*]} -I\${SRCDIR} -O3
// #cgo LDFLAGS: -lstdc++ -ltorch -lc10 -ltorch_cpu
import "C"
GO

go run ./infra/gotch/stub apply -zip "$zip" -in libtch/torch_api_generated.cpp.h \
  -out "$libtch/torch_api_generated.cpp.h" -list "$list" \
  -reason "not available in libtorch $torch_version (stubbed by infra/gotch/patch.sh)"

# gotch's ops take their output slot from C.malloc(0) and never free it: a
# minimum chunk (32 bytes) of C heap leaked per op, about 17 KB a learner step
# (measured with mallinfo2, 12-06), and an op with more than three outputs
# writes past its block. Each slot now has room for 16 tensors (the most any
# op returns is 7) and is freed when the op returns; the op has copied the
# tensors out of it by then. A slot already freed by gotch is left alone.
perl -0pi -e 's/^([ \t]*)(\w+) := \(\*lib\.Ctensor\)\(unsafe\.Pointer\(C\.malloc\(0\)\)\)\n(?![ \t]*defer C\.free)/$1$2 := (*lib.Ctensor)(unsafe.Pointer(C.malloc(outSlots)))\n$1defer C.free(unsafe.Pointer($2))\n/mg' \
  "$new/ts/tensor-generated.go" "$new/ts/tensor.go" "$new/ts/patch.go"
cat >"$new/ts/asyncwebrl_outslots.go" <<'GO'
package ts

// Written by asyncwebrl's infra/gotch/patch.sh: the bytes of an op's output
// slot, room for 16 tensors.
const outSlots = 16 * 8
GO
slots=$(grep -c 'C.malloc(outSlots)' "$new/ts/tensor-generated.go" || true)
[ "$slots" -ge 2000 ] || die "gotch: $slots output slots patched in ts/tensor-generated.go, want every op's (2447 in v0.9.1)"

# Swapped in whole, so a build never sees a half-patched copy for long and
# an interrupted run leaves no stamp.
rm -rf "$GOTCH_DIR"
mv "$new" "$GOTCH_DIR"
cgo_ok || die "gotch: go does not build $GOTCH_MODULE/libtch from $GOTCH_DIR with the new cgo flags; go.mod needs: replace $GOTCH_MODULE => ./.run/gotch"

echo "$key" >"$stamp"
log "gotch: patched copy in $GOTCH_DIR: CPU cgo flags, $(grep -c '^atg_' "$list") wrappers stubbed"
