#!/bin/sh
# ===- tools/bench/ort_plan_matrix.sh - Plans of real models run in ORT -===#
#
# Issue 15's acceptance matrix: every forward model of ../shared/models
# whose data is present, partitioned by each ALGO onto each K devices, is
# written with -o and --emit-stages into its own folder; from another
# current directory, ONNX Runtime (onnxruntime-node) loads the annotated
# model and the stages (test/ort/run_stages.js), and the pipeline runner
# streams 8 micro-batches in GPipe and in 1F1B order with optimizations off
# (max abs error must be 0) and GPipe with them on (relative error <= 1e-5).
# Prints one markdown table row per run; never run by the tests.
#
#   tools/bench/ort_plan_matrix.sh BUILD_DIR OUT_DIR [ALGOS] [KS]
#   e.g. nice tools/bench/ort_plan_matrix.sh build /tmp/matrix "dp ip" "2 4 8"
#
# ===----------------------------------------------------------------------===#
set -u
BUILD=$(cd "$1" && pwd)
OUT=$2
ALGOS=${3:-"dp ip"}
KS=${4:-"2 4 8"}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SHARED=$SRC/../shared/models
TOOL=$BUILD/tools/onnx-partition
ORT=$SRC/test/ort
[ -d "$SHARED" ] || { echo "skipped: $SHARED is absent"; exit 0; }
mkdir -p "$OUT/elsewhere"
OUT=$(cd "$OUT" && pwd)

# model file | extra partitioner flags. ort_gpt2_one_layer has 8 positions
# (wpe 8x4, causal mask 8x8): seq_len is at most 8, ORT itself fails beyond.
MODELS="onnx_light_bvlc_alexnet.onnx|
onnx_light_squeezenet.onnx|
onnx_light_resnet50.onnx|
external_data/conv_qdq_external_ini.onnx|
ort_bert_toy_optimized.onnx|--dim batch=2 --dim max_seq_len_in_batch=16
ort_gpt2_one_layer.onnx|--dim batch_size=2 --dim seq_len=8"

field() { sed -n "s/.*$1 \([^ ,]*\).*/\1/p" "$2" | tail -1; }

echo "| model | algo | k | stages | annotated + stages in ORT (max abs) | GPipe x8 (max abs) | 1F1B x8 (max abs) | GPipe x8, ORT opt. on (max rel) | measured period ms | result |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
echo "$MODELS" | while IFS='|' read -r MODEL FLAGS; do
  NAME=$(basename "$MODEL" .onnx)
  ORIG=$OUT/$NAME.orig.onnx
  # The original as binary beside its data (text models are not in the list).
  ORIG=$SHARED/$MODEL
  for ALGO in $ALGOS; do
    for K in $KS; do
      D=$OUT/$NAME-$ALGO-$K
      rm -rf "$D" && mkdir -p "$D"
      # Only the integer programs read --time-limit (any other algorithm rejects it).
      LIMIT=""
      case $ALGO in ip|ip-contig|latency-ip) LIMIT="--time-limit 10" ;; esac
      # shellcheck disable=SC2086
      if ! timeout 600 "$TOOL" "$ORIG" $FLAGS --algo "$ALGO" --devices "$K" $LIMIT \
           -o "$D/annotated.onnx" --emit-stages "$D/stages" > "$D/partition.log" 2>&1; then
        echo "| $NAME | $ALGO | $K | - | - | - | - | - | - | not written: $(grep -m1 error: "$D/partition.log" | cut -c1-140) |"
        continue
      fi
      STAGES=$(ls "$D/stages" | grep -c '\.onnx$')
      cd "$OUT/elsewhere" || exit 1
      node "$ORT/run_stages.js" "$ORIG" "$D/annotated.onnx" "$D/stages" > "$D/stages.log" 2>&1
      S1=$?
      node "$SRC/tools/ort-runner/run_pipeline.js" "$D/stages" --original "$ORIG" --schedule gpipe > "$D/gpipe.log" 2> "$D/gpipe.err"
      S2=$?
      node "$SRC/tools/ort-runner/run_pipeline.js" "$D/stages" --original "$ORIG" --schedule 1f1b > "$D/1f1b.log" 2> "$D/1f1b.err"
      S3=$?
      node "$SRC/tools/ort-runner/run_pipeline.js" "$D/stages" --original "$ORIG" --schedule gpipe --optimize > "$D/opt.log" 2> "$D/opt.err"
      S4=$?
      cd "$SRC" || exit 1
      ANN=$(sed -n 's/.*annotated max abs error \([^,]*\), stages max abs error \([^,]*\),.*/\1 \/ \2/p' "$D/stages.log" | tail -1)
      G=$(field "max abs error" "$D/gpipe.log")
      F=$(field "max abs error" "$D/1f1b.log")
      O=$(field "max rel error" "$D/opt.log")
      P=$(sed -n 's/.*measured \([0-9.]*\) ms (ratio.*/\1/p' "$D/gpipe.log")
      R=PASS
      [ $S1 -eq 0 ] && [ $S2 -eq 0 ] && [ $S3 -eq 0 ] && [ $S4 -eq 0 ] || R="FAIL ($S1 $S2 $S3 $S4)"
      echo "| $NAME | $ALGO | $K | $STAGES | ${ANN:--} | ${G:--} | ${F:--} | ${O:--} | ${P:--} | $R |"
    done
  done
done
