#!/usr/bin/env bash
# Issue 38, item 1: planning time of Llama-2-shaped training graphs of L
# decoder layers (gen_llama_layers.py; about 166 L planned nodes) under the
# default algorithm, dp, --granularity layer, and pardnn. CPU seconds (user
# + system) of the whole tool run, one run per cell, with the ratio to the
# issue's target where it sets one (a 32,000-node graph in <= 5 s, a
# 100,000-node one in <= 30 s); the plan's objective beside it.
#
# usage: tools/bench/bench_size.sh [BUILD_DIR] [L...]   (default: build 6 200 620)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
shift || true
LAYERS=("$@")
[ ${#LAYERS[@]} -gt 0 ] || LAYERS=(6 200 620)
MODEL=../shared/models/llama2_7b_forward.onnx
if [ ! -f "$MODEL" ]; then
  echo "skip: $MODEL not found (the shared Llama-2 export)"
  exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# The target for a graph of N planned nodes: 5 s around 32,000, 30 s around 100,000.
target() {
  if [ "$1" -ge 25000 ] && [ "$1" -le 40000 ]; then echo 5
  elif [ "$1" -ge 80000 ] && [ "$1" -le 120000 ]; then echo 30
  else echo -; fi
}
printf '%-5s %-26s %8s %8s %8s %7s  %s\n' L configuration nodes cpu_s target ratio result
for L in "${LAYERS[@]}"; do
  /usr/bin/python3 tools/bench/gen_llama_layers.py "$L" "$TMP/l$L.onnx" >/dev/null
  for CFG in "auto" "dp" "auto --granularity layer" "pardnn"; do
    read -r ALGO REST <<<"$CFG"
    # shellcheck disable=SC2086
    /usr/bin/time -f '%U %S' -o "$TMP/t" "$BUILD/tools/onnx-partition" "$TMP/l$L.onnx" --training \
      --dim batch_size=1 --devices 8 --memory 1TiB --algo "$ALGO" $REST >"$TMP/out" 2>&1 || true
    NODES=$(grep -oE '[0-9]+ nodes, [0-9]+ edges' "$TMP/out" | head -1 | cut -d' ' -f1 || true)
    RESULT=$(grep -E '^  algorithm |^error' "$TMP/out" | head -1 | sed 's/^ *//' | cut -c1-70 || true)
    if grep -q 'more than the [0-9]* it plans directly' "$TMP/out"; then
      RESULT="$RESULT [contracted: $(grep -oE 'granularity [a-z]+ to [0-9]+ units' "$TMP/out" | head -1 || true)]"
    fi
    CPU=$(tail -1 "$TMP/t" | awk '{printf "%.2f", $1 + $2}')
    TARGET=$(target "${NODES:-0}")
    RATIO=-
    [ "$TARGET" = - ] || RATIO=$(awk -v c="$CPU" -v t="$TARGET" 'BEGIN{printf "%.2f", c / t}')
    printf '%-5s %-26s %8s %8s %8s %7s  %s\n' "$L" "$CFG" "${NODES:-?}" "$CPU" "$TARGET" "$RATIO" "$RESULT"
  done
done
