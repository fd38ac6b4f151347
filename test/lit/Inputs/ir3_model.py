#!/usr/bin/env python3
"""ir3_model.py IN OUT: writes IN as an IR version 3 model (every
initializer also a graph input, as IR 3 requires). Issue 20: the input of
the --emit-recompute-check regression test, whose check model must not
inherit IR 3 (its initializers are not inputs; ONNX Runtime refuses that)."""
import sys

import onnx

m = onnx.load(sys.argv[1])
inputs = {i.name for i in m.graph.input}
for t in m.graph.initializer:
    if t.name not in inputs:
        m.graph.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
m.ir_version = 3
onnx.save(m, sys.argv[2])
