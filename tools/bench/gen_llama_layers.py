#!/usr/bin/python3
"""Llama-2-shaped forward graphs of L decoder layers (issue 38, item 1).

Repeats decoder layer 0 of an exported Llama-2 forward graph (default
../shared/models/llama2_7b_forward.onnx, 32 layers) L times, each copy with
its own weights (layers.<i>.*), between the export's embedding and its final
norm and output projection. The weights stay external-data references
without a file, as in the export: onnx-partition plans on shapes. With
--training onnx-partition then builds the backward graph; a training graph
of L layers has about 162 L planned nodes (L = 200: 32,424; L = 620: 100,464).

usage: gen_llama_layers.py L OUT.onnx [--from MODEL.onnx]
"""
import argparse
import os
import sys

import onnx


def layer_span(nodes, k):
    idx = [i for i, n in enumerate(nodes) if n.name.startswith(f"/layers.{k}/")]
    return (idx[0], idx[-1] + 1) if idx else None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "..", "..", "shared", "models", "llama2_7b_forward.onnx")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("layers", type=int)
    ap.add_argument("out")
    ap.add_argument("--from", dest="src", default=default)
    a = ap.parse_args()
    if a.layers < 2:
        sys.exit("error: L must be at least 2")
    if not os.path.exists(a.src):
        sys.exit(f"error: {a.src} not found (the shared Llama-2 export); pass --from MODEL.onnx")
    m = onnx.load(a.src, load_external_data=False)
    g = m.graph
    nodes = list(g.node)
    spans = []
    while layer_span(nodes, len(spans)):
        spans.append(layer_span(nodes, len(spans)))
    if len(spans) < 3:
        sys.exit("error: expected at least three /layers.<k>/ node blocks")
    # A layer's block runs to the next layer's first node (the export's
    # unnamed Constants sit between a layer's named nodes). Layer 0 also
    # computes what every layer shares (the causal mask, the rotary
    # tables): it is kept, and layer 1 is the template of layers 1..L-1.
    block1 = nodes[spans[1][0] : spans[2][0]]
    block2 = nodes[spans[2][0] : spans[3][0] if len(spans) > 3 else spans[2][0] + len(block1)]
    last = nodes[spans[-1][0] : spans[-1][0] + len(block1)]
    prefix, suffix = nodes[: spans[1][0]], nodes[spans[-1][0] + len(block1) :]
    if len(block2) != len(block1) or any(a.op_type != b.op_type for a, b in zip(block1, block2)):
        sys.exit("error: layers 1 and 2 of the export differ; cannot repeat layer 1")
    produced1 = {t for n in block1 for t in n.output}
    # Layer 1's inputs that layer 2 takes from layer 1 (the residual
    # stream): in copy i they come from copy i-1.
    carry = {}
    for n1, n2 in zip(block1, block2):
        for t1, t2 in zip(n1.input, n2.input):
            if t2 in {t for n in block2 for t in n.output}:
                continue
            if t1 not in produced1 and t2 in produced1:
                carry[t1] = t2
    # The suffix reads the last layer's outputs: named by layer 1's.
    last_to_1 = {tl: t1 for nl, n1 in zip(last, block1) for tl, t1 in zip(nl.output, n1.output)}

    def rename(t, i):
        for pre in ("layers.1.", "/layers.1/"):
            if t.startswith(pre):
                return pre.replace("1", str(i)) + t[len(pre) :]
        if "/layers.1/" in t:
            return t.replace("/layers.1/", f"/layers.{i}/")
        return f"{t}__L{i}"

    out_nodes = list(prefix)
    for i in range(1, a.layers):
        for n in block1:
            c = onnx.NodeProto()
            c.CopyFrom(n)
            c.name = rename(n.name, i)
            for j, t in enumerate(n.input):
                if t in produced1 or t.startswith("layers.1."):
                    c.input[j] = rename(t, i)
                elif t in carry and i > 1:
                    c.input[j] = rename(carry[t], i - 1)
            for j, t in enumerate(n.output):
                c.output[j] = rename(t, i)
            out_nodes.append(c)
    for n in suffix:
        c = onnx.NodeProto()
        c.CopyFrom(n)
        for j, t in enumerate(n.input):
            if t in last_to_1:
                c.input[j] = rename(last_to_1[t], a.layers - 1)
        out_nodes.append(c)

    template = [t for t in g.initializer if t.name.startswith("layers.1.")]
    inits = [t for t in g.initializer if not t.name.startswith("layers.") or t.name.startswith("layers.0.")]
    for i in range(1, a.layers):
        for t in template:
            c = onnx.TensorProto()
            c.CopyFrom(t)
            c.name = rename(t.name, i)
            for e in c.external_data:
                if e.key == "location":
                    e.value = c.name
            inits.append(c)

    del g.node[:]
    g.node.extend(out_nodes)
    del g.initializer[:]
    g.initializer.extend(inits)
    del g.value_info[:]  # shapes are re-inferred
    g.name = f"llama2_{a.layers}_layers"
    onnx.save(m, a.out)
    print(f"{a.out}: {a.layers} decoder layers, {len(out_nodes)} ONNX nodes, {len(inits)} initializers")


if __name__ == "__main__":
    main()
