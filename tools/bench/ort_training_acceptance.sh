#!/bin/sh
# ===- tools/bench/ort_training_acceptance.sh - Every ORT training graph run ===#
#
# Issue 36's acceptance: each ONNX Runtime training graph of ../shared/models
# but BLOOM-3 (ATen) planned with --devices 2 and 4, run by the runner under
# GPipe and 1F1B with 4 micro-batches against the unpartitioned graph.
#
#   tools/bench/ort_training_acceptance.sh BUILD_DIR OUT_DIR
#
# ===----------------------------------------------------------------------===#
set -u
TOOL=$(cd "$1" && pwd)/tools/onnx-partition
OUT=$2
SRC=$(cd "$(dirname "$0")/../.." && pwd)
MODELS=$SRC/../shared/models
mkdir -p "$OUT"
for m in ort_mlp_training transformer_lora_training cnn1d_seizure_training; do
  [ -f "$MODELS/$m.onnx" ] || { echo "skip $m: $MODELS/$m.onnx absent"; continue; }
  dims="--dim batch_size=4"
  [ $m = ort_mlp_training ] && dims="--dim input-0_dim0=4 --dim input-0_dim1=784 --dim output-0_dim0=4"
  for d in 2 4; do
    # shellcheck disable=SC2086
    "$TOOL" "$MODELS/$m.onnx" $dims --devices $d -o "$OUT/${m}_$d.onnx" --emit-stages "$OUT/${m}_$d" > /dev/null
    for s in gpipe 1f1b; do
      echo "=== $m --devices $d $s"
      node "$SRC/tools/ort-runner/run_pipeline.js" "$OUT/${m}_$d" --original "$MODELS/$m.onnx" --schedule $s \
          --micro-batches 4 --json "$OUT/${m}_${d}_$s.json" 2> /dev/null | grep -E '^check:|^(PASS|FAIL)$'
    done
  done
done
