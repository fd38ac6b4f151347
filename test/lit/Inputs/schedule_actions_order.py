# Whether each device of a runner trace (run_pipeline.js --trace) ran its
# stages in the order pipeline.json's schedule_actions list (issue 35): F
# runs the rank's forward stages (kinds F and FB, from the runner's --json
# report), I its backward stages (kind B), W its weight-gradient stages
# (kind W; none when the backward is written whole), B both; with the rank's
# "virtual_stages" (zb-v's chunks) only the stages of the action's chunk.
# Usage: schedule_actions_order.py STAGE_DIR TRACE.json REPORT.json
import json
import os
import re
import sys

d, trace, report = sys.argv[1:4]
pj = json.load(open(os.path.join(d, "pipeline.json")))
kind = {s["stage"]: s["kind"] for s in json.load(open(report))["stages"]}
name = {s["id"]: s["name"] for s in pj["stages"]}
events = json.load(open(trace))["traceEvents"]
ran = {}
for e in sorted((e for e in events if e.get("ph") == "X"), key=lambda e: e["ts"]):
    stage = e["args"]["stage"]
    device = next(s["device"] for s in pj["stages"] if s["name"] == stage)
    ran.setdefault(device, []).append((stage, e["args"]["micro_batch"]))
for r in pj["schedule_actions"]["ranks"]:
    want = []
    chunk = dict((sid, v) for sid, v in r["virtual_stages"]) if "virtual_stages" in r else None
    for a in r["actions"]:
        v, k, mb = re.fullmatch(r"(\d+)([FIWB])(\d+)", a).groups()
        runs = {"F": ("F", "FB"), "I": ("B",), "W": ("W",), "B": ("B", "W")}[k]
        for sid in sorted(r["stages"]):
            if chunk is not None and chunk[sid] != int(v):
                continue
            if kind[name[sid]] in runs:
                want.append((name[sid], int(mb)))
    got = ran.get(r["device"], [])
    print(r["device"], "ran its listed order" if got == want else f"ran {got}, the lists say {want}")
