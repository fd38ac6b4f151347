#!/usr/bin/env python3
"""Prints what a Chrome trace holds, for FileCheck: every process and lane
name (as Perfetto shows them), then the number of slices per lane and the
counters. Fails (exit 1) if the file is not a trace Perfetto would load."""
import collections
import json
import sys

with open(sys.argv[1]) as f:
    trace = json.load(f)
events = trace["traceEvents"]
procs, lanes = {}, {}
for e in events:
    if e["ph"] == "M" and e["name"] == "process_name":
        procs[e["pid"]] = e["args"]["name"]
    if e["ph"] == "M" and e["name"] == "thread_name":
        lanes[(e["pid"], e["tid"])] = e["args"]["name"]
slices = collections.Counter()
counters = set()
for e in events:
    if e["ph"] == "X":
        assert e["dur"] >= 0 and (e["pid"], e["tid"]) in lanes, e
        slices[(e["pid"], e["tid"])] += 1
    elif e["ph"] == "C":
        counters.add((procs.get(e["pid"], "?"), e["name"]))
for (pid, tid), name in sorted(lanes.items()):
    print(f"lane {procs.get(pid, '?')} / {name}: {slices[(pid, tid)]} slices")
for proc, name in sorted(counters):
    print(f"counter {proc} / {name}")
