#!/usr/bin/env python3
"""name_nodes.py IN OUT NAME...: writes IN with its i-th node named NAME[i].
ONNX 1.12's text syntax has no node names, and ONNX Runtime's training
conventions live in them (a backward node is named '<forward>_Grad/...',
the gradient accumulator 'AccumulateGrad_<parameter>')."""
import sys

import onnx

m = onnx.load(sys.argv[1])
names = sys.argv[3:]
if len(names) != len(m.graph.node):
    sys.exit("name_nodes.py: %d names for %d nodes" % (len(names), len(m.graph.node)))
for node, name in zip(m.graph.node, names):
    node.name = name
onnx.save(m, sys.argv[2])
