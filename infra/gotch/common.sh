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

# gotch_zip VERSION: the module zip `go mod download` verified against go.sum;
# the pristine sources always come from it, never from the (patched) module dir.
# gotch's module path has no upper-case letters, so it needs no case-escaping.
gotch_zip() { echo "$(go env GOMODCACHE)/cache/download/$GOTCH_MODULE/@v/$1.zip"; }
