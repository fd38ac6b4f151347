#!/usr/bin/env bash
# Issue 38, item 1: which --granularity plans best per second under the
# default algorithm, on the shared real exports and generated Llama-shaped
# graphs (gen_llama_layers.py). One run per cell: CPU seconds (user +
# system) of the whole tool run, the plan's objective and its gap to the
# bound the report prints.
#
# usage: tools/bench/bench_granularity.sh [BUILD_DIR] [L...]   (default: build 6 24)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
shift || true
LAYERS=("$@")
[ ${#LAYERS[@]} -gt 0 ] || LAYERS=(6 24)
M=../shared/models
if [ ! -d "$M" ]; then
  echo "skip: $M not found (the shared models)"
  exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
INPUTS=(
  "llama2_7b_forward --training|$M/llama2_7b_forward.onnx|--training --dim batch_size=1 --memory 1TiB"
  "ort_bloom3_training|$M/ort_bloom3_training.onnx|--dim inputs_input_ids_dim0=2 --dim inputs_attention_mask_dim0=2 --dim inputs_attention_mask_dim1=16 --dim inputs_labels_dim0=2 --dim inputs_labels_dim1=16"
  "transformer_lora_training|$M/transformer_lora_training.onnx|--dim batch_size=1"
  "onnx_light_resnet50 --training|$M/onnx_light_resnet50.onnx|--training"
)
for L in "${LAYERS[@]}"; do
  /usr/bin/python3 tools/bench/gen_llama_layers.py "$L" "$TMP/l$L.onnx" >/dev/null
  INPUTS+=("llama L=$L --training|$TMP/l$L.onnx|--training --dim batch_size=1 --memory 1TiB")
done
printf '%-32s %-7s %7s %7s %12s %7s\n' input granul. nodes cpu_s objective gap
for IN in "${INPUTS[@]}"; do
  IFS='|' read -r NAME FILE ARGS <<<"$IN"
  [ -f "$FILE" ] || { echo "skip: $FILE not found"; continue; }
  for G in default op layer block chain; do
    GRAN=()
    [ "$G" = default ] || GRAN=(--granularity "$G")
    # shellcheck disable=SC2086
    /usr/bin/time -f '%U %S' -o "$TMP/t" "$BUILD/tools/onnx-partition" "$FILE" $ARGS --devices 8 \
      "${GRAN[@]}" >"$TMP/out" 2>&1 || true
    NODES=$(grep -oE '[0-9]+ nodes, [0-9]+ edges' "$TMP/out" | head -1 | cut -d' ' -f1 || true)
    OBJ=$(grep -oE '^  algorithm [a-z-]+: [a-z-]+ [0-9.e+]+' "$TMP/out" | head -1 | awk '{print $4}' || true)
    GAP=$(grep -oE '^  bound .*gap [0-9.]+%' "$TMP/out" | head -1 | grep -oE '[0-9.]+%$' || true)
    [ -n "$OBJ" ] || OBJ=$(grep -E '^error' "$TMP/out" | head -1 | cut -c1-40)
    CPU=$(tail -1 "$TMP/t" | awk '{printf "%.2f", $1 + $2}')
    printf '%-32s %-7s %7s %7s %12s %7s\n' "$NAME" "$G" "${NODES:-?}" "$CPU" "${OBJ:-?}" "${GAP:--}"
  done
done
