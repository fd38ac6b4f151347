#!/bin/sh
# ===- tools/bench/ort_replan_round.sh - Predicted vs measured, one re-plan -===#
#
# Issue 15 item 3's benchmark: plan MODEL with ALGO on K devices using the
# analytical cost model, run the stages as a pipeline in ONNX Runtime
# (tools/ort-runner/run_pipeline.js, 8 micro-batches, GPipe) with --profile, plan
# again with the measured kernel times (--profile ... --profile-device acc:
# the devices here are CPU cores standing in for accelerators), and run the
# new plan. Prints one markdown table per round: each stage's predicted and
# measured time, and the period and throughput, with the ratios.
#
#   tools/bench/ort_replan_round.sh BUILD_DIR OUT_DIR MODEL.onnx ALGO K [extra flags]
#
# ===----------------------------------------------------------------------===#
set -eu
BUILD=$(cd "$1" && pwd)
OUT=$2
MODEL=$3
ALGO=$4
K=$5
shift 5
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TOOL=$BUILD/tools/onnx-partition
mkdir -p "$OUT"
for ROUND in 0 1; do
  D=$OUT/round$ROUND
  rm -rf "$D"
  PROFILE=""
  [ $ROUND -eq 1 ] && PROFILE="--profile $OUT/round0/profile.json --profile-device acc"
  # shellcheck disable=SC2086
  "$TOOL" "$MODEL" "$@" --algo "$ALGO" --devices "$K" $PROFILE --emit-stages "$D" > "$OUT/plan$ROUND.log"
  node "$SRC/tools/ort-runner/run_pipeline.js" "$D" --original "$MODEL" --schedule gpipe --micro-batches 8 \
      --profile "$D/profile.json" --json "$D/run.json" > "$OUT/run$ROUND.log" 2> "$OUT/run$ROUND.err"
  python3 - "$D/run.json" "$ROUND" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
costs = "analytical cost model" if sys.argv[2] == "0" else "ORT kernel times measured in round 0 (--profile)"
print(f"\nRound {sys.argv[2]} (plan from the {costs}):\n")
print("| stage | device | nodes | predicted ms | measured ms | measured / predicted |")
print("| --- | --- | --- | --- | --- | --- |")
for s in r["stages"]:
    ratio = "-" if not s.get("ratio") else f'{s["ratio"]:.2f}'
    print(f'| {s["stage"]} | {s["device"]} | {s["nodes"]} | {s["predicted"]:.4g} | {s["measured"]:.4g} | {ratio} |')
pr = r["predicted_period"]; me = r["measured_period"]
print(f'| period (GPipe, 8 micro-batches) | | | {pr:.4g} | {me:.4g} | {me / pr:.2f} |')
print(f'| throughput, micro-batches/s | | | {1000 / pr:.4g} | {1000 / me:.4g} | {pr / me:.2f} |')
print(f'\nUnpartitioned model: {r["original_ms_per_micro_batch"]:.4g} ms per micro-batch; '
      f'outputs: max abs error {r["check"]["abs"]} ({"PASS" if r["check"]["ok"] else "FAIL"}).')
PY
done
