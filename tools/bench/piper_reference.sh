#!/usr/bin/env bash
# Issue 34: `onnx-partition --algo piper` side by side with Piper's own
# program (msr-fiddle/piper, algo.cpp, MIT) on BERT-32 and BERT-64 with
# 8 GiB per device, the file's 1920 micro-batches and 25e9 B/s.
#
#   tools/bench/piper_reference.sh [--fetch] [K ...]     (default K: 64 128 512 2048)
#
# Piper's runs are stopped after $PIPER_TIMEOUT seconds (default 600; BERT-64
# at 2048 devices does not finish in that time) and reported as "timeout".
# Piper's source comes from $PIPER_SRC (a folder with algo.cpp and nlohmann/),
# or $PIPER_GIT_DIR (a git dir of msr-fiddle/piper), or with --fetch a
# shallow clone from GitHub; without any of them the reference columns are
# skipped with a message. algo.cpp is built untouched in a scratch folder
# ($PIPER_SCRATCH, default /tmp/piper-ref) with a driver that #includes it
# (its main renamed) and calls runDP, getTPSForResult and
# runPipeDream2BWPlanner -- never copied into the repository.
# BERT-64 is built as Piper's readBERTA100(64) builds it: 32 copies of a
# middle transformer layer spliced into the chain (insertTransformerLayer).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOL=${ONNX_PARTITION:-$ROOT/build/tools/onnx-partition}
INPUT=${PIPER_INPUT:-$ROOT/../shared/workloads/piper/bert32a100.json}
SCRATCH=${PIPER_SCRATCH:-/tmp/piper-ref}
FETCH=0
if [[ ${1:-} == --fetch ]]; then FETCH=1; shift; fi
KS=("$@")
[[ ${#KS[@]} -gt 0 ]] || KS=(64 128 512 2048)
[[ -f $INPUT ]] || { echo "skipped: $INPUT is absent"; exit 0; }
[[ -x $TOOL ]] || { echo "error: build onnx-partition first ($TOOL)"; exit 1; }

mkdir -p "$SCRATCH"
REF=""
if [[ -n ${PIPER_SRC:-} && -f $PIPER_SRC/algo.cpp ]]; then
  cp -r "$PIPER_SRC"/. "$SCRATCH"/
  REF=1
elif [[ -n ${PIPER_GIT_DIR:-} ]]; then
  git --git-dir="$PIPER_GIT_DIR" archive HEAD | tar -x -C "$SCRATCH"
  REF=1
elif [[ $FETCH == 1 ]]; then
  rm -rf "$SCRATCH/clone"
  if git clone -q --depth 1 https://github.com/msr-fiddle/piper "$SCRATCH/clone"; then
    cp -r "$SCRATCH/clone"/. "$SCRATCH"/
    REF=1
  fi
fi
if [[ -n $REF ]]; then
  cat > "$SCRATCH/driver.cpp" <<'CPP'
// Usage: driver FILE K MEMGIB LAYERS [baseline]; keeps the file's bandwidth and mbsInBatch.
#define main piper_original_main
#include "algo.cpp"
#undef main
int main(int argc, char **argv) {
    if (argc < 5) { cerr << "usage: driver FILE K MEMGIB LAYERS [baseline]\n"; return 2; }
    json j;
    ifstream jsonfile(argv[1]);
    jsonfile >> j;
    Instance ins = j.get<Instance>();
    for (int t = 33; t <= atoi(argv[4]); ++t) ins.insertTransformerLayer(); // as readBERTA100
    ins.maxDevices = atoi(argv[2]);
    ins.maxMemoryPerDevice = atof(argv[3]) * (1 << 30);
    cout << setprecision(17);
    Graph g(ins);
    Result r = g.runDP();
    cout << "piper_tps " << g.getTPSForResult(r) << " stages " << r.stages.size() << "\n";
    if (argc > 5)
        cout << "baseline_tps " << g.getTPSForResult(runPipeDream2BWPlanner(ins, true, true)) << "\n";
}
CPP
  if [[ ! -x $SCRATCH/driver || $SCRATCH/driver.cpp -nt $SCRATCH/driver ]]; then
    (cd "$SCRATCH" && g++ -O3 -std=c++17 -include numeric -include cmath -include cassert -include algorithm \
       driver.cpp -o driver)
  fi
else
  echo "note: Piper's algo.cpp not available (set PIPER_SRC or PIPER_GIT_DIR, or pass --fetch): reference columns skipped"
fi

# BERT-64 as readBERTA100(64): 32 transformer layers inserted.
BERT64=$SCRATCH/bert64a100.json
/usr/bin/python3 - "$INPUT" "$BERT64" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
nodes = {n["id"]: n for n in j["nodes"]}
name = "ParallelTransformerLayer"
fresh = 10**9
for added in range(32):
    prev, nxt = {}, {}
    for e in j["edges"]:
        if nodes[e["sourceId"]].get("name") == name and nodes[e["destId"]].get("name") == name:
            prev[e["destId"]] = e["sourceId"]; nxt[e["sourceId"]] = e["destId"]
    # the last middle transformer along the chain (Piper's copies all land before the last one)
    first = next(w for w in nodes if nodes[w].get("name") == name and w not in prev and w in nxt)
    w = first
    while w in nxt:
        if w in prev: v = w
        w = nxt[w]
    s, nu = nxt[v], fresh + added
    for e in j["edges"]:
        if e["sourceId"] == v and e["destId"] == s:
            e["destId"] = nu; cost = e["communicationCost"]
    j["edges"].append({"sourceId": nu, "destId": s, "communicationCost": cost})
    copy = json.loads(json.dumps(nodes[v])); copy["id"] = nu
    for t, opts in nodes[v]["TMPCs"].items():
        for c in opts: c["syncTimeBw"][str(nu)] = c["syncTimeBw"].pop(str(s))
    for t, opts in nodes[s]["TMPCs"].items():
        for c in opts: c["syncTimeFw"][str(nu)] = c["syncTimeFw"].pop(str(v))
    for t, opts in copy["TMPCs"].items():
        for c in opts:
            c["syncTimeFw"] = {str(v): c["syncTimeFw"][str(prev[v])]}
            c["syncTimeBw"] = {str(s): c["syncTimeBw"][str(nu)] if str(nu) in c["syncTimeBw"] else c["syncTimeBw"][str(s)]}
    j["nodes"].append(copy); nodes[nu] = copy
json.dump(j, open(sys.argv[2], "w"))
PY

field() { grep -m1 "$1" "$2" | sed 's/.*: *//'; }
printf '%-8s %6s %22s %8s %8s %22s %8s %8s\n' input K piper_tps cpu_s rss_MB ours_tps cpu_s rss_MB
for SPEC in "bert32 $INPUT 32" "bert64 $BERT64 64"; do
  read -r NAME FILE LAYERS <<<"$SPEC"
  for K in "${KS[@]}"; do
    P_TPS=- P_CPU=- P_RSS=-
    if [[ -n $REF ]]; then
      # Piper inserts BERT-64's layers itself, from BERT-32.
      if /usr/bin/time -v timeout "${PIPER_TIMEOUT:-600}" "$SCRATCH/driver" "$INPUT" "$K" 8 "$LAYERS" \
           >"$SCRATCH/p.out" 2>"$SCRATCH/p.err"; then
        P_TPS=$(awk '/piper_tps/{print $2}' "$SCRATCH/p.out")
      else
        P_TPS=timeout/failed
      fi
      P_CPU=$(field "User time" "$SCRATCH/p.err")
      P_RSS=$(( $(field "Maximum resident" "$SCRATCH/p.err") / 1024 ))
    fi
    /usr/bin/time -v "$TOOL" "$FILE" --algo piper --devices "$K" --memory 8GiB >"$SCRATCH/o.out" 2>"$SCRATCH/o.err" || true
    O_TPS=$(awk '/^time per sample:/{print $4}' "$SCRATCH/o.out")
    O_CPU=$(field "User time" "$SCRATCH/o.err")
    O_RSS=$(( $(field "Maximum resident" "$SCRATCH/o.err") / 1024 ))
    printf '%-8s %6s %22s %8s %8s %22s %8s %8s\n' "$NAME" "$K" "$P_TPS" "$P_CPU" "$P_RSS" "${O_TPS:-failed}" "$O_CPU" "$O_RSS"
  done
done
