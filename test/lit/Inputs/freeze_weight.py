#!/usr/bin/env python3
"""Freezes one parameter of an ONNX Runtime training graph.

Usage: freeze_weight.py IN.onnx OUT.onnx PARAM

Issue 37, item 5. In ORT's conventions a parameter trains when the graph
computes its gradient (PARAM_grad) and accumulates it into
PARAM_grad.accumulation.buffer. This drops the nodes that make PARAM_grad
and accumulate it, the buffer input and the accumulator's graph output, so
PARAM stays a weight the forward reads, with no gradient: frozen, as a
LoRA graph's base weights are.
"""
import sys

import onnx


def main():
    src, out, param = sys.argv[1], sys.argv[2], sys.argv[3]
    model = onnx.load(src)
    g = model.graph
    grad = param + "_grad"
    dropped = {grad, grad + ".accumulation.buffer", grad + ".accumulation.out"}
    keep = [n for n in g.node if not (set(n.output) & dropped)]
    if len(keep) == len(g.node):
        sys.exit(f"error: {src} has no node making {grad}")
    del g.node[:]
    g.node.extend(keep)
    for field in (g.input, g.output):
        kept = [v for v in field if v.name not in dropped]
        del field[:]
        field.extend(kept)
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main()
