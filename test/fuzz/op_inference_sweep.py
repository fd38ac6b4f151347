#!/usr/bin/env python3
"""op_inference_sweep.py TOOL OUT_DIR: one-node models of every ONNX-domain op
of the installed onnx module (issue 39, item 1), with inputs of rank 0, 1 and
4 and each integer (list) attribute at 0, -1, +-2^62 (lists: [0], [2^62],
[-1]*4, [0]*8), run through `TOOL inspect`. Every run that ends by a signal
(or a 30 s timeout) is listed in OUT_DIR/results.txt and its model kept as
OUT_DIR/crash_<op>_<n>.onnx. On ONNX 1.12 before lib/IR/OpInferenceChecks.cpp:
1,204 runs, 23 crashes (Scan, STFT, DepthToSpace, LayerNormalization); after:
none. Not run by CI (about 5 minutes):

    /usr/bin/python3 test/fuzz/op_inference_sweep.py build/tools/onnx-partition /tmp/sweep
"""
import os
import subprocess
import sys

import onnx
from onnx import TensorProto, defs, helper

TYPES = (("tensor(float)", TensorProto.FLOAT), ("tensor(int64)", TensorProto.INT64),
         ("tensor(int32)", TensorProto.INT32), ("tensor(bool)", TensorProto.BOOL),
         ("tensor(uint8)", TensorProto.UINT8), ("tensor(string)", TensorProto.STRING))


def model(schema, ranks, attrs):
    n_in = min(len(schema.inputs), 4) if schema.inputs else 0
    n_in = max(min(n_in, 3), schema.min_input) if schema.inputs else 0
    inputs, infos = [], []
    for i in range(min(n_in, 4)):
        allowed = schema.inputs[min(i, len(schema.inputs) - 1)].types
        elem = next((code for name, code in TYPES if name in allowed), TensorProto.FLOAT)
        inputs.append("x%d" % i)
        infos.append(helper.make_tensor_value_info("x%d" % i, elem, [2] * ranks[i % len(ranks)]))
    outputs = ["y%d" % i for i in range(max(len(schema.outputs), 1))]
    node = helper.make_node(schema.name, inputs, outputs, domain=schema.domain, **attrs)
    graph = helper.make_graph([node], "g", infos, [helper.make_value_info(o, onnx.TypeProto()) for o in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def variants(schema):
    yield {}, [0]
    yield {}, [1]
    yield {}, [4]
    for name, a in schema.attributes.items():
        if a.type == onnx.AttributeProto.INT:
            for v in (0, -1, 1 << 62, -(1 << 62)):
                yield {name: v}, [4]
        elif a.type == onnx.AttributeProto.INTS:
            for v in ([0], [1 << 62], [-1] * 4, [0] * 8):
                yield {name: v}, [4]


def main():
    tool, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    runs = crashes = 0
    with open(os.path.join(out, "results.txt"), "w") as results:
        for schema in defs.get_all_schemas():
            if schema.domain != "" or schema.deprecated:
                continue
            for attrs, ranks in variants(schema):
                try:
                    m = model(schema, ranks, attrs)
                except Exception:  # an attribute the helper cannot express
                    continue
                path = os.path.join(out, "m.onnx")
                onnx.save(m, path)
                try:
                    rc = subprocess.run([tool, "inspect", path], capture_output=True, timeout=30).returncode
                except subprocess.TimeoutExpired:
                    rc = "timeout"
                runs += 1
                if rc not in (0, 1, 2):
                    crashes += 1
                    onnx.save(m, os.path.join(out, "crash_%s_%d.onnx" % (schema.name, runs)))
                    results.write("%s %s %s %s\n" % (rc, schema.name, attrs, ranks))
                    results.flush()
        results.write("runs %d, crashes %d\n" % (runs, crashes))
    print("runs %d, crashes %d (%s)" % (runs, crashes, os.path.join(out, "results.txt")))
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
