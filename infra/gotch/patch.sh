#!/usr/bin/env bash
# Makes gotch (the module copy in GOMODCACHE) build against Debian's CPU
# libtorch-dev instead of the libtorch 2.x + CUDA tree its lib.go expects:
#   1. rewrites libtch/lib.go's cgo lines for the system libtorch, CPU only;
#   2. stubs the generated C wrappers listed in stubs-<gotch version>.txt: they
#      call torch functions this libtorch lacks and would not compile; a stub
#      throws inside gotch's PROTECT(...), so calling it returns a Go error.
#   3. drops go's cached parse of the module (see drop_module_index), which
#      would otherwise keep the old cgo lines, and checks go sees the new ones.
# The wrappers are rewritten from the module zip (verified against go.sum),
# so the result depends only on the zip and the list. A stamp in the module
# dir, keyed by this script, the list and the stub program, makes a second
# run a no-op. We never commit gotch's source; see README.md.
set -euo pipefail
source "$(dirname "$0")/common.sh"

need_torch_headers
command -v go >/dev/null || die "gotch: go not found in PATH"
cd "$REPO_DIR"

mod=$(go list -m -f '{{.Version}} {{.Dir}}' "$GOTCH_MODULE") ||
  die "gotch: unable to find $GOTCH_MODULE in $REPO_DIR/go.mod"
read -r version dir <<<"$mod"
list=$GOTCH_INFRA/stubs-$version.txt
[ -f "$list" ] || die "gotch: no stub list for $version ($list); generate it with infra/gotch/find-stubs.sh"
torch_version=$(libtorch_version)
key=$( {
  echo "libtorch $torch_version"
  cat "$0" "$GOTCH_INFRA/common.sh" "$list"
  find "$GOTCH_INFRA/stub" -name '*.go' ! -name '*_test.go' | sort | xargs cat
} | sha256sum | cut -c1-16)
# cgo_ok: the go command sees our cgo lines for libtch (not gotch's CUDA ones).
cgo_ok() {
  local ld
  ld=$(go list -f '{{join .CgoLDFLAGS " "}}' "$GOTCH_MODULE/libtch" 2>/dev/null) || return 1
  [[ $ld == *-ltorch_cpu* && $ld != *cuda* ]]
}

# drop_module_index: go caches a parse of each module-cache module (its Go
# files' imports and #cgo lines) in GOCACHE, keyed by the module dir alone,
# because the module cache is meant to be immutable. Once lib.go is rewritten
# that entry is stale and builds would keep gotch's CUDA flags, so delete it;
# the next go command re-indexes. The entry's id comes from go itself
# (GODEBUG=gocachehash=1 prints every cache key it computes) rather than
# from a copy of go's internal hashing.
drop_module_index() {
  local hashes id
  hashes=$(GODEBUG=gocachehash=1 go list -e -f '' "$GOTCH_MODULE/libtch" 2>&1) || true
  id=$(awk -v dir="$dir" '
    index($0, "HASH[moduleIndex]: \"module index ") == 1 && index($0, " " dir "\\n\"") { want = 1; next }
    want && !done && $1 == "HASH[moduleIndex]:" { print $2; done = 1 }' <<<"$hashes")
  if [ -z "$id" ]; then
    log "gotch: go printed no module index key for $dir (go index disabled?); not dropping it"
    return 0
  fi
  rm -f "$(go env GOCACHE)/${id:0:2}/$id-a"
}

stamp=${dir:+$dir/.asyncwebrl-patched}
if [ -n "$stamp" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$key" ] && cgo_ok; then
  log "gotch: already patched ($dir)"
  exit 0
fi

log "gotch: downloading $GOTCH_MODULE@$version"
go mod download "$GOTCH_MODULE"
dir=$(go list -m -f '{{.Dir}}' "$GOTCH_MODULE")
zip=$(gotch_zip "$version")
[ -d "$dir/libtch" ] || die "gotch: module dir $dir has no libtch/"
[ -f "$zip" ] || die "gotch: module zip $zip missing after go mod download"
stamp=$dir/.asyncwebrl-patched
libtch=$dir/libtch

# The module cache is read-only; open just what we write, and close it again
# after (go clean -modcache copes with either).
chmod u+w "$dir" "$libtch" "$libtch/lib.go" "$libtch/torch_api_generated.cpp.h"
rm -f "$stamp" # an interrupted run must not look finished

# -g is left to CGO_CXXFLAGS (go's default "-O2 -g"); the package's -O3 follows
# and wins. The CUDA libraries and ${SRCDIR}/libtorch paths are gone: Debian's
# libtorch is CPU-only and lives on the default include and library paths.
tmp=$(mktemp "$libtch/.lib.go.XXXXXX")
cat >"$tmp" <<GO
package libtch

// Rewritten by asyncwebrl's infra/gotch/patch.sh for Debian's CPU libtorch-dev $torch_version.

// #cgo CPPFLAGS: ${TORCH_CPPFLAGS[*]}
// #cgo CFLAGS: -I\${SRCDIR} -O3 -Wall -Wno-unused-variable -Wno-deprecated-declarations -Wno-c++11-narrowing -Wno-sign-compare -Wno-unused-function
// #cgo CXXFLAGS: ${TORCH_CXXFLAGS[*]} -I\${SRCDIR} -O3
// #cgo LDFLAGS: -lstdc++ -ltorch -lc10 -ltorch_cpu
import "C"
GO
chmod 0444 "$tmp"
mv -f "$tmp" "$libtch/lib.go"

go run ./infra/gotch/stub apply -zip "$zip" -in libtch/torch_api_generated.cpp.h \
  -out "$libtch/torch_api_generated.cpp.h" -list "$list" \
  -reason "not available in libtorch $torch_version (stubbed by infra/gotch/patch.sh)"

drop_module_index
cgo_ok || die "gotch: go still sees gotch's original cgo flags for $dir/libtch (stale module index in $(go env GOCACHE)?); 'go clean -cache' and rerun"

echo "$key" >"$stamp"
chmod a-w "$stamp" "$libtch/lib.go" "$libtch/torch_api_generated.cpp.h" "$libtch" "$dir"
log "gotch: patched $dir: CPU cgo flags, $(grep -c '^atg_' "$list") wrappers stubbed"
