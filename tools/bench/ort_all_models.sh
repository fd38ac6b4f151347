#!/bin/sh
# ===- tools/bench/ort_all_models.sh - Every shared model, dp on 4, run -===#
#
# Issue 16's acceptance: every model of ../shared/models (training graphs,
# the model whose external data is absent, and the external-data one
# included) is partitioned with `dp` onto 4 devices and written with -o and
# --emit-stages; the tool loads the outputs back (`inspect` of the
# annotated model and of every stage, and `--load-plan` of the annotated
# model on the original, whose objective must equal the plan's); then ONNX
# Runtime runs the annotated model and the stages against the original
# (test/ort/run_stages.js, optimizations off, max abs error must be 0)
# where it has the kernels and the data. Prints one markdown row per model;
# never run by the tests (docs/testing.md has the table).
#
#   tools/bench/ort_all_models.sh BUILD_DIR OUT_DIR
#
# ===----------------------------------------------------------------------===#
set -u
BUILD=$(cd "$1" && pwd)
mkdir -p "$2/elsewhere"
OUT=$(cd "$2" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SHARED=$SRC/../shared/models
TOOL=$BUILD/tools/onnx-partition
ORT=$SRC/test/ort
[ -d "$SHARED" ] || { echo "skipped: $SHARED is absent"; exit 0; }

# model file | --dim bindings (ort_gpt2_one_layer has 8 positions at most)
MODELS="cnn1d_seizure_training.onnx|--dim batch_size=2
transformer_lora_training.onnx|--dim batch_size=2
ort_mlp_training.onnx|--dim input-0_dim0=2 --dim input-0_dim1=784 --dim output-0_dim0=2
ort_bloom3_training.onnx|--dim inputs_input_ids_dim0=2 --dim inputs_attention_mask_dim0=2 --dim inputs_attention_mask_dim1=16 --dim inputs_labels_dim0=2 --dim inputs_labels_dim1=16
ort_bert_toy_optimized.onnx|--dim batch=2 --dim max_seq_len_in_batch=16
ort_gpt2_one_layer.onnx|--dim batch_size=2 --dim seq_len=8
external_data/conv_qdq_external_ini.onnx|
onnx_light_resnet50.onnx|
onnx_light_squeezenet.onnx|
onnx_light_bvlc_alexnet.onnx|
llama2_7b_forward.onnx|--dim batch_size=1 --dim seq_len=16"

objective() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['objective'])" "$1" 2>/dev/null; }

echo "| model | written (-o, --emit-stages) | stages | read back: inspect (annotated + stages) | read back: --load-plan objective (plan / reloaded) | ONNX Runtime (annotated / stages, max abs) |"
echo "| --- | --- | --- | --- | --- | --- |"
echo "$MODELS" | while IFS='|' read -r MODEL FLAGS; do
  NAME=$(basename "$MODEL" .onnx)
  ORIG=$SHARED/$MODEL
  D=$OUT/$NAME
  rm -rf "$D" && mkdir -p "$D"
  # shellcheck disable=SC2086
  if ! timeout 900 "$TOOL" "$ORIG" $FLAGS --algo dp --devices 4 -o "$D/annotated.onnx" \
       --emit-stages "$D/stages" --report "$D/report.json" > "$D/partition.log" 2>&1; then
    echo "| $NAME | no: $(grep -m1 error: "$D/partition.log" | cut -c1-160) | - | - | - | - |"
    continue
  fi
  STAGES=$(ls "$D/stages" | grep -c '\.onnx$')
  OK=0 N=0
  for F in "$D/annotated.onnx" "$D"/stages/*.onnx; do
    N=$((N + 1))
    "$TOOL" inspect "$F" > "$D/inspect-$(basename "$F").log" 2>&1 && OK=$((OK + 1))
  done
  # shellcheck disable=SC2086
  "$TOOL" "$ORIG" $FLAGS --devices 4 --load-plan "$D/annotated.onnx" --report "$D/reloaded.json" \
    > "$D/reload.log" 2>&1
  P=$(objective "$D/report.json")
  R=$(objective "$D/reloaded.json")
  RELOAD="$P / ${R:-error: $(grep -m1 error: "$D/reload.log" | cut -c1-100)}"
  [ "$P" = "$R" ] && RELOAD="$RELOAD (equal)"
  WARN=$(grep -m1 "^warning:" "$D/partition.log" | cut -c1-90)
  if grep -q "absent" "$D/partition.log"; then
    RUN="not run: external data absent (${WARN:-see partition.log})"
  else
    cd "$OUT/elsewhere" || exit 1
    node "$ORT/run_stages.js" "$ORIG" "$D/annotated.onnx" "$D/stages" > "$D/ort.log" 2>&1
    S=$?
    cd "$SRC" || exit 1
    ANN=$(sed -n 's/.*annotated max abs error \([^,]*\), stages max abs error \([^,]*\),.*/\1 \/ \2/p' "$D/ort.log" | tail -1)
    if [ $S -eq 0 ]; then
      RUN="PASS ($ANN)"
    else
      # Which of the models ORT can load at all, and the first op it lacks.
      LOADS=$(node -e '
        const ort = require(process.argv[1]);
        (async () => {
          let ok = 0, lack = "";
          for (const f of process.argv.slice(2)) {
            try { await ort.InferenceSession.create(f, {logSeverityLevel: 4}); ++ok; }
            catch (e) {
              const m = /([A-Za-z0-9_.]+:[A-Za-z0-9_]+)\(-?[0-9]+\) is not a registered function\/op/.exec(e.message) ||
                        /Could not find an implementation for ([A-Za-z0-9_]+\([0-9]+\))/.exec(e.message);
              if (!lack) lack = m ? m[1] : e.message.slice(0, 80);
            }
          }
          console.log(`${ok} of ${process.argv.length - 2} models (original, annotated, stages) load` + (lack ? `, first op without a kernel: ${lack}` : ""));
        })();' "$ORT/node_modules/onnxruntime-node" "$ORIG" "$D/annotated.onnx" "$D"/stages/*.onnx 2>/dev/null)
      RUN="not run: ${LOADS:-FAIL $(grep -m1 -i error "$D/ort.log" | cut -c1-120)}"
    fi
  fi
  echo "| $NAME | yes | $STAGES | $OK of $N | $RELOAD | $RUN |"
done
