#!/bin/sh
# ===- tools/bench/ort_calibrate_round.sh - Calibrated plan, measured ------===#
#
# Issue 23's calibration acceptance: MODEL on the 2 CPU-core "devices" of
# PLATFORM (tools/bench/two-cpu-cores.json: this machine's cores standing in
# for accelerators; ORT's CPU provider, one intra-op thread). Prices the
# graph ORT runs with optimizations off (--ort-optimizations none), as the
# runner runs it.
#   round "uncal": plan with PLATFORM, run the stages REPS times;
#   calibrate:     onnx-partition calibrate --measure (test/ort/profile.js)
#                  --target acc -> OUT/cal.json (per-op-kind fit);
#   round "cal":   plan with OUT/cal.json, run the stages REPS times.
# Each run is tools/ort-runner/run_pipeline.js (GPipe, 8 micro-batches,
# --original check); the machine is shared, so each stage's and the
# period's figure is the median over the REPS runs, with `uptime` beside.
#
# Issue 37, item 7: it exits 1, saying so on stderr, when calibrate refuses
# the fit (it predicts held-out kernels worse than PLATFORM), when the
# calibrated plan's measured period (median) is longer than the
# uncalibrated one's, or when its prediction of that period is further off
# (|measured / predicted - 1|) than the uncalibrated plan's.
#
#   tools/bench/ort_calibrate_round.sh BUILD_DIR OUT_DIR MODEL.onnx ALGO PLATFORM [REPS] [extra flags]
#
# ===----------------------------------------------------------------------===#
set -eu
BUILD=$(cd "$1" && pwd)
OUT=$2
MODEL=$3
ALGO=$4
PLATFORM=$5
REPS=${6:-3}
shift 5
[ $# -gt 0 ] && shift
EXTRA="$*" # --dim bindings etc., for every plan and the calibration
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TOOL=$BUILD/tools/onnx-partition
mkdir -p "$OUT"
round() { # NAME PLATFORM_FILE
  D=$OUT/$1
  rm -rf "$D"
  # shellcheck disable=SC2086
  "$TOOL" "$MODEL" $EXTRA --algo "$ALGO" --platform "$2" --ort-optimizations none --emit-stages "$D" \
      > "$OUT/plan-$1.log"
  for R in $(seq 1 "$REPS"); do
    echo "$1 run $R: $(uptime)" >> "$OUT/uptime.log"
    node "$SRC/tools/ort-runner/run_pipeline.js" "$D" --original "$MODEL" --schedule gpipe --micro-batches 8 \
        --json "$D/run$R.json" > "$OUT/run-$1-$R.log" 2> "$OUT/run-$1-$R.err"
  done
}
round uncal "$PLATFORM"
echo "calibrate: $(uptime)" >> "$OUT/uptime.log"
# shellcheck disable=SC2086
if ! "$TOOL" calibrate "$MODEL" $EXTRA --platform "$PLATFORM" --measure "$OUT/profile.json" --target acc \
    --runs 10 --warmup 3 -o "$OUT/cal.json" > "$OUT/calibrate.log"; then
  echo "FAIL: calibrate refused or failed (its error above); no calibrated round" >&2
  exit 1
fi
cat "$OUT/calibrate.log"
round cal "$OUT/cal.json"
python3 - "$OUT" "$REPS" <<'PY'
import json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
periods, errors = {}, {}
for name in ("uncal", "cal"):
    runs = [json.load(open(f"{out}/{name}/run{r}.json")) for r in range(1, reps + 1)]
    label = "uncalibrated platform" if name == "uncal" else "calibrated platform (cal.json)"
    print(f"\n{label}: median of {reps} runs\n")
    print("| stage | device | nodes | predicted ms | measured ms (median) | measured / predicted |")
    print("| --- | --- | --- | --- | --- | --- |")
    for i, s in enumerate(runs[0]["stages"]):
        m = statistics.median(r["stages"][i]["measured"] for r in runs)
        p = s["predicted"]
        print(f'| {s["stage"]} | {s["device"]} | {s["nodes"]} | {p:.4g} | {m:.4g} | {m / p:.2f} |')
    pr = runs[0]["predicted_period"]
    me = statistics.median(r["measured_period"] for r in runs)
    allp = ", ".join(f'{r["measured_period"]:.4g}' for r in runs)
    print(f'| period (GPipe, 8 micro-batches) | | | {pr:.4g} | {me:.4g} ({allp}) | {me / pr:.2f} |')
    ok = all(r["check"]["ok"] for r in runs)
    print(f'\noutputs against the unpartitioned model: {"PASS" if ok else "FAIL"} in every run')
    periods[name] = me
    errors[name] = abs(me / pr - 1) * 100
# Issue 37, item 7: a calibration that makes the plan slower, or its
# prediction further off, is a failure.
summary = (f'period {periods["cal"]:.4g} ms against {periods["uncal"]:.4g} ms uncalibrated (medians of {reps} '
           f'runs); predicted {errors["cal"]:.1f}% off against {errors["uncal"]:.1f}%')
failed = []
if periods["cal"] > periods["uncal"]:
    failed.append("the calibrated plan measures worse than the uncalibrated one")
if errors["cal"] > errors["uncal"]:
    failed.append("the calibrated prediction of the period is further off than the uncalibrated one")
if failed:
    print(f'\nFAIL: {"; ".join(failed)}: {summary}', file=sys.stderr)
    sys.exit(1)
print(f'\ncalibrated plan: {summary}')
PY
