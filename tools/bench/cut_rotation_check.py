#!/usr/bin/env python3
"""Independent check of where a contiguous plan cuts between nodes (issue 21).

Reads a --report JSON of a plan whose stages each sit on one accelerator and
prices, for every rotation (offset) of the stage-to-device order -- stage i
on accelerator (i + r) mod k, accelerators numbered node-major as the
platform numbers them -- the bytes the plan's transfers carry between nodes.
Every rotation is a contiguous alternative with the same stages, so the
plan's own cut must carry no more bytes than the best of them.

Written apart from the C++ code: it reads only the report's assignment,
transfers (bytes, sender and receiver device) and platform.

usage: cut_rotation_check.py REPORT.json
Prints the plan's bytes between nodes, the best rotation and its bytes;
exit 1 when the plan carries more than the best rotation.
"""
import json
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    report = json.load(open(sys.argv[1]))
    platform = report["platform"]
    k = int(platform["accelerators"])
    per_node = int(platform.get("node_accelerators") or k)
    stage_of = {}
    for a in report["assignment"]:
        stage_of.setdefault(a["device"], set()).add(a["stage"])
    for dev, stages in stage_of.items():
        if len(stages) != 1 or not dev.startswith("acc"):
            sys.exit("error: %s holds stages %s; the check needs one stage per accelerator" % (dev, sorted(stages)))
    order = sorted(stage_of, key=lambda d: next(iter(stage_of[d])))  # devices by stage
    index = {dev: i for i, dev in enumerate(order)}
    device_of = {dev: int(dev[3:]) for dev in order}

    def cross_bytes(place):
        return sum(t["bytes"] for t in report["transfers"]
                   if place(t["from"]) // per_node != place(t["to"]) // per_node)

    mine = cross_bytes(lambda d: device_of[d])
    best, best_r = None, None
    for r in range(k):
        b = cross_bytes(lambda d: (index[d] + r) % k)
        if best is None or b < best:
            best, best_r = b, r
    print("stages %d, nodes of %d accelerators, rotations checked %d" % (len(order), per_node, k))
    print("plan: %.0f bytes between nodes; best rotation (offset %d): %.0f bytes" % (mine, best_r, best))
    if mine > best:
        print("FAIL: a rotation of the stage order cuts fewer bytes between nodes")
        sys.exit(1)
    print("OK: no rotation cuts fewer bytes between nodes")


main()
