#!/usr/bin/env bash
# tools/setup.sh - install what is missing, build, then run the example or the
# tests. This is the whole quick start of README.md:
#
#   bash tools/setup.sh example   # set up, build, partition examples/mlp_skip.onnxtxt
#   bash tools/setup.sh test      # set up, build, run every test (ctest: units + lit)
#
# Idempotent: packages already installed are not reinstalled, the npm package
# is installed once, and the build is incremental. Works as root on a fresh
# Debian bookworm machine (uses sudo when not root).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
JOBS=${JOBS:-$(nproc)}
MODE=${1:-example}

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config python3
  libonnx-dev libprotobuf-dev protobuf-compiler
  coinor-libcbc-dev coinor-cbc
  libcli11-dev nlohmann-json3-dev
  llvm-14-tools libgtest-dev libbenchmark-dev
  nodejs npm
  clang-14 libclang-rt-14-dev graphviz
  clang-format-14 clang-tidy-14
  ccache
  pybind11-dev python3-dev python3-onnx python3-pytest
)

log() { printf 'setup: %s\n' "$*" >&2; }

install_packages() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    # nodejs/npm may come from elsewhere (the machine image ships Node 20).
    if [[ $p == nodejs || $p == npm ]] && command -v "${p/nodejs/node}" >/dev/null 2>&1; then continue; fi
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "installing: ${missing[*]}"
    local SUDO=""
    [[ $(id -u) -eq 0 ]] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

install_onnxruntime() {
  # ONNX Runtime from the npm registry, pinned by each folder's package-lock:
  # test/ort (onnxruntime-node, the equivalence tests) and the runner,
  # tools/ort-runner (onnxruntime-node 1.30 and onnxruntime-web 1.19.2, whose
  # WebAssembly training build runs training stages). onnxruntime-node ships
  # the CPU libonnxruntime.so; no download scripts run (--ignore-scripts).
  local dir
  for dir in test/ort tools/ort-runner; do
    [[ -f $dir/package.json ]] || continue
    if [[ ! -d $dir/node_modules/onnxruntime-node ]] ||
       { grep -q onnxruntime-web "$dir/package.json" && [[ ! -d $dir/node_modules/onnxruntime-web ]]; }; then
      log "installing ONNX Runtime (npm) into $dir"
      (cd "$dir" && if [[ -f package-lock.json ]]; then npm ci --ignore-scripts --no-audit --no-fund --loglevel=error;
        else npm install --ignore-scripts --no-audit --no-fund --loglevel=error; fi) >&2
    fi
  done
}

# ccache makes a second build of the same sources (another clone, CI after a
# session on the same machine) nearly free; paths are hashed relative to the
# clone's parent folder so clones at different places share the cache.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$ROOT")}
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

build() {
  if [[ ! -f $BUILD_DIR/build.ninja ]]; then
    cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
  fi
  log "building in $BUILD_DIR"
  cmake --build "$BUILD_DIR" -j "$JOBS" | grep -vE '^\[[0-9]+/[0-9]+\] ' || true
  test -x "$BUILD_DIR/tools/onnx-partition"
}

install_packages
install_onnxruntime
# `deps` only installs (CI's sanitizer build configures its own build folder).
[[ $MODE == deps ]] && exit 0
build

case $MODE in
  example)
    mkdir -p "$BUILD_DIR/example"
    exec "$BUILD_DIR/tools/onnx-partition" examples/mlp_skip.onnxtxt --dim N=256 \
      --platform v100 --devices 2 --algo "${ALGO:-dp}" \
      -o "$BUILD_DIR/example/mlp_skip.partitioned.onnx" --report "$BUILD_DIR/example/report.json"
    ;;
  test)
    # Slow tests (name prefix Slow) are left to the benchmarks; everything
    # else runs. ctest ends with its "N tests passed" summary line.
    exec ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" -E 'Slow'
    ;;
  *)
    echo "usage: bash tools/setup.sh [example|test|deps]" >&2
    exit 2
    ;;
esac
