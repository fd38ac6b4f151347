#!/bin/bash
# run-twice-compare.sh TOOL MODEL OUTDIR ALGO...: runs each algorithm twice
# with -o, --report, --emit-stages, --dot and --trace and fails unless both
# runs wrote the same bytes (issue 16, item 6; issue 20 added the chain
# planners, --dot and --trace). Prints one "same bytes: ALGO" line each.
set -euo pipefail
TOOL=$1 MODEL=$2 OUT=$3
shift 3
for A in "$@"; do
  for I in 1 2; do
    rm -rf "$OUT/run-$I" && mkdir -p "$OUT/run-$I"
    "$TOOL" "$MODEL" --devices 2 --cpus 1 --algo "$A" -o "$OUT/m.onnx" --report "$OUT/r.json" \
      --emit-stages "$OUT/st" --dot "$OUT/g.dot" --trace "$OUT/t.json" > /dev/null
    cp "$OUT/m.onnx" "$OUT/r.json" "$OUT/g.dot" "$OUT/t.json" "$OUT/run-$I/" && cp -r "$OUT/st" "$OUT/run-$I/st"
  done
  diff -r "$OUT/run-1" "$OUT/run-2"
  echo "same bytes: $A"
done
