#!/usr/bin/env bash
# Issue 38, item 1: planning time of Llama-2-shaped training graphs of L
# decoder layers (gen_llama_layers.py; about 162 L planned nodes) under the
# default algorithm, --granularity layer, and pardnn. CPU seconds (user) of
# the whole tool run, one run per cell; the plan's objective beside it.
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
printf '%-5s %-26s %8s %8s  %s\n' L configuration nodes cpu_s result
for L in "${LAYERS[@]}"; do
  /usr/bin/python3 tools/bench/gen_llama_layers.py "$L" "$TMP/l$L.onnx" >/dev/null
  for CFG in "auto" "auto --granularity layer" "pardnn"; do
    read -r ALGO REST <<<"$CFG"
    # shellcheck disable=SC2086
    /usr/bin/time -f '%U' -o "$TMP/t" "$BUILD/tools/onnx-partition" "$TMP/l$L.onnx" --training \
      --dim batch_size=1 --devices 8 --memory 1TiB --algo "$ALGO" $REST >"$TMP/out" 2>&1 || true
    NODES=$(grep -oE '[0-9]+ nodes, [0-9]+ edges' "$TMP/out" | head -1 | cut -d' ' -f1)
    RESULT=$(grep -E '^  algorithm |^error' "$TMP/out" | head -1 | sed 's/^ *//' | cut -c1-90)
    printf '%-5s %-26s %8s %8s  %s\n' "$L" "$CFG" "${NODES:-?}" "$(tail -1 "$TMP/t")" "$RESULT"
  done
done
