#!/usr/bin/env python3
"""coarsen_chain.py IN.json OUT.json N: merges consecutive blocks of a chain
JSON (onnx-partition chain) into at most N blocks of about equal forward +
backward time: times, stored and weight bytes add up, a merged block's
output is its last block's. Issue 21: PipeDream's profiles have 21-39
blocks, above pipeline-ilp's exact ILP (10); their 10-block coarsenings
measure the ILP's solve time by link (docs/benchmarks-history.md)."""
import json
import sys

src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
chain = json.load(open(src))
blocks = chain["blocks"]
total = sum(b["forwardTime"] + b["backwardTime"] for b in blocks)
groups, done = [[]], 0.0
for b in blocks:
    t = b["forwardTime"] + b["backwardTime"]
    # Open the next group when this block's midpoint passes the next share.
    if groups[-1] and done + t / 2 > total * len(groups) / n and len(groups) < n:
        groups.append([])
    groups[-1].append(b)
    done += t
merged = []
for g in groups:
    merged.append({
        "name": "+".join(x["name"] for x in g),
        "forwardTime": sum(x["forwardTime"] for x in g),
        "backwardTime": sum(x["backwardTime"] for x in g),
        "outputBytes": g[-1]["outputBytes"],
        "storedBytes": sum(x.get("storedBytes", x["outputBytes"]) for x in g),
        "weightBytes": sum(x.get("weightBytes", 0) for x in g),
    })
chain["blocks"] = merged
chain["name"] = chain.get("name", "chain") + "-%d" % len(merged)
json.dump(chain, open(out, "w"), indent=1)
