#!/bin/bash
# Builds the seed corpora from the repository's test inputs and runs every
# libFuzzer harness for SECONDS each, FUZZ_JOBS at a time (issue 16).
#   test/fuzz/run_fuzzers.sh BUILD_DIR SECONDS [FUZZER...]
# BUILD_DIR was configured with -DCMAKE_CXX_COMPILER=clang++ -DONNXP_FUZZ=ON
# (-DONNXP_SANITIZE=ON for ASan+UBSan) and built with --target onnxp-fuzzers.
# Prints, per fuzzer, libFuzzer's final line (executions, coverage). Exits
# non-zero on a finding; the crashing input is left in $OUT/crash-*.
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SECONDS_EACH=$2
shift 2
SRC=$(cd "$(dirname "$0")/../.." && pwd)
FUZZERS=${*:-onnx-binary onnx-text workload platform cost-table ort-profile plan chain-json pipedream piper}
# A harness that is not built is a failure, not a fuzzer with no output (a
# campaign whose build folder was removed halfway reported exit 0).
for F in $FUZZERS; do
  [ -x "$BUILD/test/fuzz/fuzz-$F" ] || { echo "run_fuzzers: $BUILD/test/fuzz/fuzz-$F is not built" >&2; exit 2; }
done
OUT=${ONNXP_FUZZ_OUT:-$(mktemp -d /tmp/onnxp-fuzz.XXXXXX)}
C=$OUT/corpus
mkdir -p $C/{onnx-binary,onnx-text,workload,platform,cost-table,ort-profile,plan,chain-json,pipedream,piper}

# Seeds: every test input of the right format (copied to a scratch corpus,
# never into the repository).
I=$SRC/test/lit/Inputs
cp $(find $I -name '*.onnxtxt') $C/onnx-text/
# One valid model per op whose ONNX 1.12 inference crashed on extreme
# attributes or ranks (issue 39, item 1), for the fuzzer to mutate.
cp $SRC/test/fuzz/seeds/onnx-text/*.onnxtxt $C/onnx-text/
for T in $(find $I $SRC/test/fuzz/seeds/onnx-text -name '*.onnxtxt'); do
  "$BUILD/tools/onnx-partition" print "$T" --binary "$C/onnx-binary/$(basename "$T" .onnxtxt).onnx" \
    >/dev/null 2>&1 || true
done
cp $I/not-onnx.bin $C/onnx-binary/
cp $I/dp/*.json $C/workload/
cp $I/platform-3acc $C/platform/
echo '{"base": "a100", "accelerators": 4, "cpus": 2, "hostLinkBandwidth": 2.5e10, "accelerator": {"memoryBytes": "40GiB"}}' \
  > $C/platform/a100x4.json
cp $I/cost/cnn-table.csv $I/cost/cnn-table.json $C/cost-table/
cp $SRC/test/unit/Inputs/cost/*.profile.json $C/ort-profile/
echo '{"fpgas":[{"load":0,"nodes":[0,1,2]},{"load":0,"nodes":[3]}],"cpus":[{"load":0,"nodes":[4,5]}]}' \
  > $C/plan/split.json

# Chain formats (issue 25): the repository's chain inputs and seeds, plus
# PipeDream profiles and the Piper input of ../shared when it is there.
cp $SRC/test/fuzz/seeds/chain-json/* $C/chain-json/
cp $SRC/test/fuzz/seeds/pipedream/* $C/pipedream/
cp $SRC/test/fuzz/seeds/piper/* $C/piper/
cp $I/chains/*.json $C/chain-json/
if [ -d $SRC/../shared/workloads ]; then
  for W in $SRC/../shared/workloads/pipedream/*.txt; do
    # The first 40 lines: libFuzzer's inputs stay small and fast.
    head -40 "$W" > $C/pipedream/$(basename "$W")
  done
fi

# FUZZ_JOBS harnesses at once (default: the cores), each on its own corpus,
# so CI's bounded run takes SECONDS x FUZZERS / FUZZ_JOBS of wall time.
JOBS=${FUZZ_JOBS:-$(nproc)}
run_one() {
  mkdir -p $OUT/$1
  (cd $OUT/$1 && "$BUILD/test/fuzz/fuzz-$1" -max_total_time=$SECONDS_EACH -print_final_stats=1 \
     -rss_limit_mb=4096 -timeout=30 $C/$1 >$OUT/$1.log 2>&1) || true
}
for F in $FUZZERS; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  run_one $F &
done
wait
for F in $FUZZERS; do
  echo "== fuzz-$F (${SECONDS_EACH}s, seeds: $(ls $C/$F | wc -l))"
  grep -E '^#[0-9]+ *DONE|^stat::number_of_executed_units|ERROR|SUMMARY' $OUT/$F.log || true
  if [ -n "$(find $OUT/$F -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))" ]; then
    tail -n 40 $OUT/$F.log; echo "fuzz-$F: finding in $OUT/$F"; exit 1
  fi
done
echo "corpora and logs in $OUT"
