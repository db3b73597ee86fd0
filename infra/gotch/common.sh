# Shared by patch.sh and find-stubs.sh so that the stub list is computed with
# the same compiler flags the patched lib.go builds with. Sourced, never run.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

GOTCH_INFRA=$INFRA_DIR/gotch
GOTCH_MODULE=github.com/sugarme/gotch
# Debian's libtorch-dev puts the headers here and the libraries on the default
# linker path (/usr/lib/x86_64-linux-gnu), so only the C++ API include is extra.
TORCH_INCLUDE=${TORCH_INCLUDE:-/usr/include/torch}
# Debian builds libtorch with the new libstdc++ ABI; gotch defaults to the old
# one (the pip wheels' ABI), which links but breaks every std::string argument.
TORCH_CPPFLAGS=(-D_GLIBCXX_USE_CXX11_ABI=1)
TORCH_CXXFLAGS=(-std=c++17 "-I$TORCH_INCLUDE/csrc/api/include")

need_torch_headers() {
  [ -f "$TORCH_INCLUDE/csrc/api/include/torch/torch.h" ] ||
    die "gotch: libtorch headers not found in $TORCH_INCLUDE (want csrc/api/include/torch/torch.h); install libtorch-dev first: infra/setup.sh apt"
}

# libtorch_version: the installed libtorch-dev version without the Debian
# suffix ("1.13.1"). The headers' own version.h says 1.13.0, so ask dpkg.
libtorch_version() {
  local v
  v=$(dpkg-query -W -f='${Version}' libtorch-dev 2>/dev/null || true)
  v=${v%%+*}
  v=${v%%-*}
  echo "${v:-unknown}"
}

# GOTCH_DIR is the patched copy the build uses: go.mod has
# `replace github.com/sugarme/gotch => ./.run/gotch`, a path relative to the
# repository, so this is the repository's .run whatever ASYNCWEBRL_RUN_DIR says.
GOTCH_DIR=$REPO_DIR/.run/gotch

# gotch_version: the version go.mod requires, read from the file itself: go
# commands that load the module graph fail while the replace target is missing.
gotch_version() {
  awk -v m="$GOTCH_MODULE" '$1 == m && $2 ~ /^v/ { print $2; exit }' "$REPO_DIR/go.mod"
}

# gotch_sum VERSION: the module zip's go.sum hash, pinned here because go.sum
# does not list a module replaced by a directory (go mod tidy drops it).
gotch_sum() {
  case $1 in
    v0.9.1) echo "h1:J6JCE1C2AfPmM1xk0p46LdzWtfNvbvZZnWdkj9v54jo=" ;;
    *) return 1 ;;
  esac
}

# gotch_zip VERSION: downloads the pristine module zip into the module cache
# (go checks a fresh download against sum.golang.org) and prints its path.
# It runs outside the repository so the replace directive does not apply and
# go.sum is not touched. The module cache is only read, never edited.
gotch_zip() {
  local tmp json zip
  tmp=$(mktemp -d)
  json=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "$GOTCH_MODULE@$1") || { rm -rf "$tmp"; return 1; }
  rm -rf "$tmp"
  zip=$(sed -n 's/^[[:space:]]*"Zip": "\(.*\)",$/\1/p' <<<"$json")
  [ -f "$zip" ] || return 1
  echo "$zip"
}
