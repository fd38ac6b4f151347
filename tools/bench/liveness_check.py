#!/usr/bin/env python3
"""Independent check of the liveness memory model (issue 22).

Reads a cost-graph dump (onnx-partition ... --print-after estimate-costs, or
a file holding it) and walks the graph on ONE device in the same order as the
tool -- Kahn's algorithm, smallest node id first -- computing, at every step,
the tensors alive by definition: a tensor (producer, name) is alive from its
producer's step to its last reader's step; outputs no edge reads are alive
during their producer's step. Prints the weights (sum of param=), the largest
live set and where it is, and weights + largest live set.

Written separately from the C++ model (a replay that allocates and frees,
not its difference arrays). Workspace is not in the dump and is not counted.

usage: liveness_check.py DUMP [--expect BYTES | --report REPORT.json] [--tolerance 0.10]
  --expect: the tool's peak for the one-device plan (--report: read it from
  the first device of a --report file); exit 1 when it is not within the
  tolerance of weights + largest live set.
"""
import heapq
import json
import re
import sys

NODE = re.compile(r"^node (\d+) '(.*)' op=\S+ role=(\S+) .* param=(\S+) out=(\S+) mem=\S+$")
EDGE = re.compile(r"^edge (\d+) -> (\d+)(?: '(.*)')? bytes=(\S+) comm=\S+$")


def num(s):
    return float("inf") if s == "inf" else float(s)


def main(argv):
    path = argv[1]
    expect = None
    tol = 0.10
    if "--expect" in argv:
        expect = float(argv[argv.index("--expect") + 1])
    if "--report" in argv:
        with open(argv[argv.index("--report") + 1]) as f:
            expect = float(json.load(f)["devices"][0]["memory"])
    if "--tolerance" in argv:
        tol = float(argv[argv.index("--tolerance") + 1])
    nodes, edges = {}, []
    # The last dump in the file wins (--print-after may print several).
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("costgraph "):
                nodes, edges = {}, []
            m = NODE.match(line)
            if m:
                nodes[int(m.group(1))] = (m.group(2), num(m.group(4)), num(m.group(5)))
                continue
            m = EDGE.match(line)
            if m:
                edges.append((int(m.group(1)), int(m.group(2)), m.group(3) or "", num(m.group(4)), len(edges)))
    n = len(nodes)
    outs = [[] for _ in range(n)]
    indeg = [0] * n
    for s, d, _, _, _ in edges:
        outs[s].append(d)
        indeg[d] += 1
    ready = [v for v in range(n) if indeg[v] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        v = heapq.heappop(ready)
        order.append(v)
        for w in outs[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                heapq.heappush(ready, w)
    assert len(order) == n, "cycle"
    pos = {v: i for i, v in enumerate(order)}
    # Tensors: named ones by (producer, name), unnamed edges one each.
    tensors = {}
    for s, d, name, b, eid in edges:
        key = (s, name) if name else (s, "#%d" % eid)
        t = tensors.setdefault(key, [s, 0.0, []])
        t[1] = max(t[1], b)
        t[2].append(d)
    read = [0.0] * n
    spans = []
    for (s, _), (_, b, readers) in tensors.items():
        read[s] += b
        spans.append((pos[s], max(pos[r] for r in readers), b))
    weights = sum(p for _, p, _ in nodes.values())
    # Replay: allocate a tensor at its producer's step, free it after its
    # last reader's step.
    made = [[] for _ in range(n)]
    freed = [[] for _ in range(n)]
    for first, last, b in spans:
        made[first].append(b)
        freed[last].append(b)
    best, at, held = 0.0, -1, 0.0
    for i, v in enumerate(order):
        held += sum(made[i])
        live = held + max(0.0, nodes[v][2] - read[v])
        if live > best:
            best, at = live, v
        held -= sum(freed[i])
    total = weights + best
    gib = 1024.0 ** 3
    print("nodes %d, tensors %d" % (n, len(tensors)))
    print("weights %.0f bytes (%.2f GiB)" % (weights, weights / gib))
    print("largest live set %.0f bytes (%.2f GiB) at node %d '%s'" % (best, best / gib, at, nodes[at][0] if at >= 0 else ""))
    print("weights + largest live set %.0f bytes (%.2f GiB)" % (total, total / gib))
    if expect is not None:
        off = abs(expect - total) / total if total else 0.0
        print("tool peak %.0f bytes (%.2f GiB): %.2f%% from the check" % (expect, expect / gib, 100 * off))
        return 0 if off <= tol else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
