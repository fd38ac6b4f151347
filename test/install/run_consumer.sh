#!/usr/bin/env bash
# The install test of issue 26 item 2: `cmake --install` the build into a
# scratch prefix, then build test/install/consumer against it twice, with
# find_package(onnx-partition) and with pkg-config, and run both and the
# installed tool on examples/mlp_skip.onnxtxt.
#   run_consumer.sh BUILD_DIR SOURCE_DIR WORK_DIR CXX_COMPILER
set -euo pipefail
BUILD=$1 SRC=$2 WORK=$3 CXX=$4
MODEL=$SRC/examples/mlp_skip.onnxtxt
rm -rf "$WORK" && mkdir -p "$WORK"
cmake --install "$BUILD" --prefix "$WORK/prefix" >"$WORK/install.log"
P=$WORK/prefix
for f in bin/onnx-partition include/onnx-partition/Compiler.h include/onnx-partition/Partition/Partitioners.def; do
  [[ -e $P/$f ]] || { echo "error: $f not installed"; exit 1; }
done
LIBDIR=$(dirname "$(find "$P" -name 'onnx-partitionConfig.cmake')")/../..

# 1. CMake package.
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$SRC/test/install/consumer" -B "$WORK/cmake-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$P" -DCMAKE_CXX_COMPILER="$CXX" "${launcher[@]}" >"$WORK/configure.log"
cmake --build "$WORK/cmake-build" >"$WORK/build.log" || { cat "$WORK/build.log"; exit 1; }
"$WORK/cmake-build/consumer" "$MODEL" 2

# 2. pkg-config, with the same source (the rpath finds a shared libonnxp,
#    built with -DONNXP_BUILD_SHARED=ON, at run time).
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
"$CXX" -O1 $(pkg-config --cflags onnx-partition) "$SRC/test/install/consumer/main.cpp" \
  -o "$WORK/pc-consumer" $(pkg-config --libs onnx-partition) -Wl,-rpath,"$(pkg-config --variable=libdir onnx-partition)"
"$WORK/pc-consumer" "$MODEL" 2

# 3. The installed tool.
"$P/bin/onnx-partition" --version
rm -rf "$WORK"
