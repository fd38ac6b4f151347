#!/usr/bin/env python3
"""workload_chain.py N OUT [MEMORY]: writes a seed 004 (msr) JSON workload
that is a chain of N nodes (seeded random accelerator times in [1, 2), 1 kB
of memory each, 8 accelerators and no CPU) with MEMORY bytes per accelerator
(default 1e12: everything fits on one). Issue 20: inputs large enough that
the DPs run far past a short --time-limit, made in a second by the test."""
import json
import random
import sys

n, out = int(sys.argv[1]), sys.argv[2]
memory = float(sys.argv[3]) if len(sys.argv) > 3 else 1e12
rng = random.Random(7)
nodes = [{"name": f"n{i}", "id": i, "supportedOnFpga": 1, "cpuLatency": 10.0,
          "fpgaLatency": 1.0 + rng.random(), "isBackwardNode": 0, "colorClass": i,
          "size": 1000.0} for i in range(n)]
edges = [{"sourceId": i, "destId": i + 1, "cost": 0.01, "size": 100.0} for i in range(n - 1)]
with open(out, "w") as f:
    json.dump({"maxSizePerFPGA": memory, "maxFPGAs": 8, "maxCPUs": 0, "nodes": nodes, "edges": edges}, f)
