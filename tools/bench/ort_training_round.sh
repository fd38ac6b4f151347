#!/bin/sh
# ===- tools/bench/ort_training_round.sh - A training plan, calibrated and run ===#
#
# Issue 36's measured-against-predicted for training: an ONNX Runtime
# training graph on the 2 CPU-core "devices" of PLATFORM
# (tools/bench/two-cpu-cores.json), priced as ORT runs it with optimizations
# off (--ort-optimizations none, the runner's default).
#   profile:   plan with PLATFORM, run the stages once with --profile (the
#              forward and backward kernels, onnxruntime-web's training build);
#   calibrate: onnx-partition calibrate --profile (that training profile)
#              --target acc -> OUT/cal.json;
#   runs:      plan with OUT/cal.json, run the stages REPS times under
#              SCHEDULE with M micro-batches (--original check).
# The machine is shared: each figure is the median over the REPS runs, with
# `uptime` beside in OUT/uptime.log.
#
#   tools/bench/ort_training_round.sh BUILD_DIR OUT_DIR MODEL.onnx PLATFORM [REPS] [SCHEDULE] [M] [extra flags]
#
# ===----------------------------------------------------------------------===#
set -eu
BUILD=$(cd "$1" && pwd)
OUT=$2
MODEL=$3
PLATFORM=$4
REPS=${5:-3}
SCHEDULE=${6:-1f1b}
M=${7:-4}
shift 4
for _ in 1 2 3; do if [ $# -gt 0 ]; then shift; fi; done
EXTRA="$*" # --dim bindings, for every plan and the calibration
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TOOL=$BUILD/tools/onnx-partition
RUN="node $SRC/tools/ort-runner/run_pipeline.js"
mkdir -p "$OUT"
plan() { # DIR PLATFORM_FILE
  rm -rf "$1"
  # shellcheck disable=SC2086
  "$TOOL" "$MODEL" $EXTRA --devices 2 --algo dp --platform "$2" --ort-optimizations none --emit-stages "$1" > "$1.log"
}
plan "$OUT/uncal" "$PLATFORM"
echo "profile: $(uptime)" >> "$OUT/uptime.log"
$RUN "$OUT/uncal" --schedule "$SCHEDULE" --micro-batches 8 --profile "$OUT/profile.json" > "$OUT/profile.log" 2>&1
# shellcheck disable=SC2086
"$TOOL" calibrate "$MODEL" $EXTRA --platform "$PLATFORM" --profile "$OUT/profile.json" --target acc \
    -o "$OUT/cal.json" > "$OUT/calibrate.log"
cat "$OUT/calibrate.log"
plan "$OUT/cal" "$OUT/cal.json"
for R in $(seq 1 "$REPS"); do
  echo "run $R: $(uptime)" >> "$OUT/uptime.log"
  $RUN "$OUT/cal" --original "$MODEL" --schedule "$SCHEDULE" --micro-batches "$M" --json "$OUT/run$R.json" \
      > "$OUT/run$R.log" 2> "$OUT/run$R.err"
done
python3 - "$OUT" "$REPS" "$SCHEDULE" "$M" <<'PY'
import json, statistics, sys
out, reps, schedule, m = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
runs = [json.load(open(f"{out}/run{r}.json")) for r in range(1, reps + 1)]
print(f"\ncalibrated platform (cal.json), {schedule}, {m} micro-batches: median of {reps} runs\n")
print("| stage | device | kind | nodes | predicted ms | measured ms (median) | measured / predicted |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for i, s in enumerate(runs[0]["stages"]):
    me = statistics.median(r["stages"][i]["measured"] for r in runs)
    p = s["predicted"]
    print(f'| {s["stage"]} | {s["device"]} | {s["kind"]} | {s["nodes"]} | {p:.4g} | {me:.4g} | {me / p:.2f} |')
for key, label in (("period", f'period ({runs[0]["period_source"]})'), ("iteration", f"iteration ({m} micro-batches)")):
    pr = runs[0][f"predicted_{key}"]
    me = statistics.median(r[f"measured_{key}"] for r in runs)
    allm = ", ".join(f'{r[f"measured_{key}"]:.4g}' for r in runs)
    print(f'| {label} | | | | {pr:.4g} | {me:.4g} ({allm}) | {me / pr:.2f} |')
ok = all(r["check"]["ok"] for r in runs)
worst = max(r["check"]["rel"] for r in runs)
print(f'\nloss and every gradient against the unpartitioned graph: {"PASS" if ok else "FAIL"} in every run '
      f'(max rel error {worst})')
PY
