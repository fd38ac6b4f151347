#!/usr/bin/env bash
#===- tools/bench/bench_real_models.sh - dp vs dpl vs pipedream on real models -===#
#
# Issue 11's acceptance benchmark: every model of ../shared/models (forward
# models also with --training) on 2, 4 and 8 A100s; for each, the max-load
# objective of dp, dpl and pipedream on the same graph, dp's wall and CPU
# time, and what dp did (exact, or contracted to which granularity). Prints
# one Markdown table (docs/benchmarks-history.md). Never run by tests.
#
# Usage: tools/bench/bench_real_models.sh [BUILD_DIR] [SHARED_DIR]
#
#===------------------------------------------------------------------------===#
set -u
BUILD=${1:-build}
SHARED=${2:-../shared}
TOOL=$BUILD/tools/onnx-partition
M=$SHARED/models
if [ ! -d "$M" ]; then echo "skipped: $M is absent" >&2; exit 0; fi

# name|file|flags
CONFIGS=(
  "cnn1d_seizure_training|cnn1d_seizure_training.onnx|--dim batch_size=1"
  "transformer_lora_training|transformer_lora_training.onnx|--dim batch_size=1"
  "ort_mlp_training|ort_mlp_training.onnx|--dim input-0_dim0=1 --dim input-0_dim1=784 --dim output-0_dim0=1"
  "ort_bloom3_training|ort_bloom3_training.onnx|--dim inputs_input_ids_dim0=2 --dim inputs_attention_mask_dim0=2 --dim inputs_attention_mask_dim1=16 --dim inputs_labels_dim0=2 --dim inputs_labels_dim1=16"
  "ort_bert_toy_optimized|ort_bert_toy_optimized.onnx|--dim batch=1 --dim max_seq_len_in_batch=128"
  "ort_bert_toy_optimized --training|ort_bert_toy_optimized.onnx|--dim batch=1 --dim max_seq_len_in_batch=128 --training"
  "conv_qdq_external_ini|external_data/conv_qdq_external_ini.onnx|"
  "conv_qdq_external_ini --training|external_data/conv_qdq_external_ini.onnx|--training"
  "onnx_light_alexnet|onnx_light_bvlc_alexnet.onnx|"
  "onnx_light_alexnet --training|onnx_light_bvlc_alexnet.onnx|--training"
  "onnx_light_squeezenet|onnx_light_squeezenet.onnx|"
  "onnx_light_squeezenet --training|onnx_light_squeezenet.onnx|--training"
  "onnx_light_resnet50|onnx_light_resnet50.onnx|"
  "onnx_light_resnet50 --training|onnx_light_resnet50.onnx|--training"
  "ort_gpt2_one_layer|ort_gpt2_one_layer.onnx|--dim batch_size=1 --dim seq_len=8"
  "llama2_7b_forward|llama2_7b_forward.onnx|--dim batch_size=1"
  "llama2_7b_forward --training|llama2_7b_forward.onnx|--dim batch_size=1 --training --memory 80GiB"
)

# run ALGO FILE FLAGS K -> "objective wall cpu note"
run() {
  local Out
  Out=$( { /usr/bin/time -f "TIME %e %U %S" "$TOOL" "$2" $3 --platform a100 --devices "$4" --algo "$1"; } 2>&1 )
  local Obj Time Note
  Obj=$(sed -n "s/.*algorithm $1: max-load \([0-9.e+-]*\) ms.*/\1/p" <<<"$Out" | head -1)
  Time=$(sed -n 's/^TIME \([0-9.]*\) \([0-9.]*\) \([0-9.]*\)/\1 \2 \3/p' <<<"$Out")
  Note=$(sed -n 's/.*note: dp: .*granularity \([a-z]*\) to \([0-9]*\) units.*refined around stage boundaries in \([0-9]*\) round.*/\1, \2 units, \3 refinement(s)/p' <<<"$Out")
  if [ -z "$Obj" ]; then
    Obj="fails: $(grep -m1 -E 'error|Segmentation|Killed' <<<"$Out" | tr -d "'\"|" | cut -c1-70)"
    grep -q "TIME" <<<"$Out" || Obj="fails (crash)"
  fi
  echo "$Obj|$Time|${Note:-exact}"
}

echo "| model | k | dp | dpl | pipedream | dp <= both | dp wall s | dp CPU s | dp search space |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for C in "${CONFIGS[@]}"; do
  IFS='|' read -r Name File Flags <<<"$C"
  for K in 2 4 8; do
    IFS='|' read -r Dp DpTime DpNote <<<"$(run dp "$M/$File" "$Flags" $K)"
    IFS='|' read -r Dpl _ _ <<<"$(run dpl "$M/$File" "$Flags" $K)"
    IFS='|' read -r Pd _ _ <<<"$(run pipedream "$M/$File" "$Flags" $K)"
    read -r Wall User Sys <<<"$DpTime"
    Ok=$(python3 -c "
import sys
def f(x):
  try: return float(x)
  except: return None
d,l,p=f('$Dp'),f('$Dpl'),f('$Pd')
if d is None: print('-')
else:
  others=[x for x in (l,p) if x is not None]
  print('yes' if all(d<=x*(1+1e-9) for x in others) else 'NO')")
    Cpu=$(python3 -c "print(round(${User:-0}+${Sys:-0},2))")
    echo "| $Name | $K | $Dp | $Dpl | $Pd | $Ok | ${Wall:--} | $Cpu | $DpNote |"
  done
done
