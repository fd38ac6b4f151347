#!/usr/bin/env python3
"""An Inception-like ONNX text model for issue 37, item 8: MODULES modules,
each BRANCHES parallel chains of LENGTH Relu/Neg nodes between a split and
a join (Add), in series. Its forward graph has about
MODULES * (LENGTH + 1) ** BRANCHES ideals from a few hundred nodes: a
mid-size graph over dp's ideal budget.

  gen_branchy.py [MODULES BRANCHES LENGTH]   (default 10 4 6)
"""
import sys

modules, branches, length = (int(a) for a in sys.argv[1:4]) if len(sys.argv) > 3 else (10, 4, 6)
lines = ['<ir_version: 8, opset_import: ["" : 17]>',
         'g (float[64,256] x) => (float[64,256] y) {']
cur = "x"
for m in range(modules):
    ends = []
    for b in range(branches):
        t = cur
        for i in range(length):
            out = f"m{m}b{b}n{i}"
            op = "Relu" if i % 2 == 0 else "Neg"
            lines.append(f"  {out} = {op} ({t})")
            t = out
        ends.append(t)
    acc = ends[0]
    for j, e in enumerate(ends[1:]):
        out = f"m{m}j{j}" if m < modules - 1 or j < len(ends) - 2 else "y"
        lines.append(f"  {out} = Add ({acc}, {e})")
        acc = out
    cur = acc
lines.append("}")
print("\n".join(lines))
