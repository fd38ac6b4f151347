#!/usr/bin/env python3
"""Protobuf-level mutation fuzz of real ONNX models (issue 39).

  model_mutations.py TOOL SECONDS [--seed N] [--out DIR] [--shared DIR]

Takes the small real models of ../shared/models (and the project's own
text models of test/lit/Inputs/models, parsed with onnx.parser), changes
one to three fields of the ModelProto -- dims, element types, attribute
values, node inputs and outputs, op types, opset and IR versions, raw data,
external references, graph inputs and outputs, duplicated nodes and
initializers --, writes the mutant as a binary model and runs
`onnx-partition MUTANT --devices D -o OUT --report R` (or `inspect`, or
`--training`). Every run is checked as chain_planner_mutations.py checks
its runs: exit code 0, 1 or 2; on failure exactly one stderr line starting
with "error:" and none saying "internal error", and no -o or --report
left behind; no sanitizer report; no death by a signal; no run past its
--time-limit by more than 3x (plus load time); on success an -o that
onnx.load reads and a --report that json.load reads.

Bounded by SECONDS (wall clock). Prints runs per model and mutation kind,
the exit-code histogram, the number of distinct messages and every
finding (the mutant kept in --out). Exits 1 on a finding. Deterministic
for a --seed (up to timing). Skips, saying so, when the onnx module is
missing.
"""
import argparse
import collections
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LIMIT = 5  # --time-limit of every partitioning run, seconds
# Small real models only: a run must take about a second.
SHARED_MODELS = ["ort_mlp_training.onnx", "onnx_light_bvlc_alexnet.onnx", "onnx_light_squeezenet.onnx",
                 "ort_gpt2_one_layer.onnx", "transformer_lora_training.onnx", "cnn1d_seizure_training.onnx"]
BIG_INTS = [0, 1, -1, 2, 3, -2 ** 63, 2 ** 31, 2 ** 31 - 1, 2 ** 62, 2 ** 63 - 1, 4294967297, 1000000]
FLOATS = [float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 5e-324, 0.0, -0.0, 1e30]
DIM_PARAMS = ["", "N", "batch", "a b", "2", "-1", "x" * 300, "\u00e9"]
ALGOS = ["auto", "dp", "greedy", "pardnn", "ip", "pipeline-pipedream", "rotor"]


def mutate_dims(rng, m):
    tensors = list(m.graph.initializer)
    vis = list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info)
    if tensors and rng.random() < 0.5:
        t = rng.choice(tensors)
        if t.dims and rng.random() < 0.7:
            t.dims[rng.randrange(len(t.dims))] = rng.choice(BIG_INTS)
        else:
            t.dims.append(rng.choice(BIG_INTS))
        return "initializer-dims"
    typed = [v for v in vis if v.type.HasField("tensor_type")]
    if not typed:
        return None
    v = rng.choice(typed)
    shape = v.type.tensor_type.shape
    if not shape.dim or rng.random() < 0.2:
        shape.dim.add().dim_value = rng.choice(BIG_INTS)
        return "value-info-rank"
    d = shape.dim[rng.randrange(len(shape.dim))]
    if rng.random() < 0.5:
        d.dim_value = rng.choice(BIG_INTS)
    else:
        d.dim_param = rng.choice(DIM_PARAMS)
    return "value-info-dims"


def mutate_type(rng, m):
    vis = [v for v in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info)
           if v.type.HasField("tensor_type")]
    choices = list(range(0, 17)) + [17, 21, 99, -1]
    if m.graph.initializer and rng.random() < 0.5:
        rng.choice(list(m.graph.initializer)).data_type = rng.choice(choices)
        return "initializer-type"
    if not vis:
        return None
    rng.choice(vis).type.tensor_type.elem_type = rng.choice(choices)
    return "value-info-type"


def mutate_attribute(rng, m):
    attrs = [(n, a) for n in m.graph.node for a in n.attribute]
    if not attrs:
        return None
    n, a = rng.choice(attrs)
    r = rng.random()
    if a.ints and r < 0.5:
        if rng.random() < 0.3:
            del a.ints[:]
        else:
            a.ints[rng.randrange(len(a.ints))] = rng.choice(BIG_INTS)
        return "attribute-ints"
    if a.HasField("i") or a.type == 2:
        a.i = rng.choice(BIG_INTS)
        return "attribute-int"
    if a.HasField("f") or a.type == 1:
        a.f = rng.choice(FLOATS)
        return "attribute-float"
    if a.HasField("t"):
        t = a.t
        if t.raw_data and rng.random() < 0.6:
            t.raw_data = t.raw_data[:rng.randrange(len(t.raw_data))]
            return "attribute-tensor-truncated"
        t.dims.append(rng.choice(BIG_INTS))
        return "attribute-tensor-dims"
    n.attribute.remove(a)
    return "attribute-removed"


def mutate_edges(rng, m):
    nodes = list(m.graph.node)
    if not nodes:
        return None
    n = rng.choice(nodes)
    r = rng.random()
    if r < 0.3 and n.input:
        del n.input[rng.randrange(len(n.input))]
        return "input-removed"
    if r < 0.5:
        n.input.append(rng.choice(["", "nowhere", n.output[0] if n.output else "x"]))
        return "input-added"
    if r < 0.7 and n.output:
        n.output[rng.randrange(len(n.output))] = rng.choice(["", "renamed", nodes[0].output[0] if nodes[0].output else "y"])
        return "output-renamed"
    if r < 0.85:
        other = rng.choice(nodes)
        if other.input and n.output:
            other.input[rng.randrange(len(other.input))] = n.output[0]  # may make a cycle
        return "input-rewired"
    m.graph.node.append(n)  # the same outputs produced twice
    return "node-duplicated"


def mutate_op(rng, m):
    nodes = list(m.graph.node)
    if not nodes:
        return None
    n = rng.choice(nodes)
    r = rng.random()
    if r < 0.6:
        n.op_type = rng.choice([x.op_type for x in nodes] + ["Scan", "Loop", "If", "STFT", "DepthToSpace", "Nope"])
    elif r < 0.8:
        n.domain = rng.choice(["", "ai.onnx", "com.microsoft", "unknown.domain", "ai.onnx.ml"])
    else:
        n.name = rng.choice(["", "a/b", "C/folded_copy_acc1", "x" * 5000, nodes[0].name])
    return "op"


def mutate_model_fields(rng, m):
    r = rng.random()
    if r < 0.35:
        m.ir_version = rng.choice([0, 1, 3, 7, 8, 9, 10, 11, 12, 100, 2 ** 40])
        return "ir-version"
    if r < 0.7:
        if not m.opset_import:
            m.opset_import.add()
        op = rng.choice(list(m.opset_import))
        op.version = rng.choice([0, 1, 6, 7, 13, 17, 18, 21, 99, -1])
        return "opset-version"
    if r < 0.85 and m.graph.output:
        del m.graph.output[rng.randrange(len(m.graph.output))]
        return "output-removed"
    if m.graph.input:
        del m.graph.input[rng.randrange(len(m.graph.input))]
        return "input-removed"
    return None


def mutate_data(rng, m):
    inits = list(m.graph.initializer)
    if not inits:
        return None
    t = rng.choice(inits)
    r = rng.random()
    if r < 0.35 and t.raw_data:
        t.raw_data = t.raw_data[:rng.randrange(len(t.raw_data))]
        return "raw-data-truncated"
    if r < 0.55:
        m.graph.initializer.append(t)  # ORT keeps the last of duplicates
        return "initializer-duplicated"
    if r < 0.8:
        t.data_location = 1  # EXTERNAL
        del t.external_data[:]
        for k, v in rng.choice([[("location", "w.bin")], [("location", "../w.bin")], [("location", "/etc/passwd")],
                                [("location", "w.bin"), ("offset", "-1")],
                                [("location", "w.bin"), ("length", "1e3")], [("location", "")]]):
            e = t.external_data.add()
            e.key, e.value = k, v
        return "external-reference"
    t.name = rng.choice(["", "dup", m.graph.node[0].output[0] if m.graph.node and m.graph.node[0].output else "z"])
    return "initializer-renamed"


MUTATORS = [mutate_dims, mutate_type, mutate_attribute, mutate_edges, mutate_op, mutate_model_fields, mutate_data]


def load_seeds(shared):
    import onnx
    from onnx import parser
    seeds = []
    models = os.path.join(shared, "models")
    for f in SHARED_MODELS:
        p = os.path.join(models, f)
        if os.path.isfile(p):
            seeds.append((f, onnx.load(p, load_external_data=False)))
    lit = os.path.join(HERE, "..", "lit", "Inputs", "models")
    for f in sorted(os.listdir(lit)):
        if not f.endswith(".onnxtxt"):
            continue
        try:
            seeds.append((f, parser.parse_model(open(os.path.join(lit, f)).read())))
        except Exception:  # noqa: BLE001 - a text model onnx's parser does not take is skipped
            continue
    return seeds


def argv_for(rng, tool, inp, work):
    out, report = os.path.join(work, "o.onnx"), os.path.join(work, "r.json")
    r = rng.random()
    if r < 0.1:
        return [tool, "inspect", inp], None, None
    argv = [tool, inp, "--devices", str(rng.choice([1, 2, 3, 4])), "--algo", rng.choice(ALGOS),
            "--time-limit", str(LIMIT), "-o", out, "--report", report]
    if r < 0.3:
        argv.append("--training")
    if rng.random() < 0.3:
        argv += ["--dim", rng.choice(["batch_size=2", "N=1", "batch=4", "unk__0=3"])]
    return argv, out, report


def check(p, argv, out, report, wall):
    errs = [l for l in p.stderr.splitlines() if l.startswith("error:")]
    if p.returncode < 0 or p.returncode not in (0, 1, 2):
        return "exit %d" % p.returncode, errs
    if any(s in p.stderr for s in ("runtime error:", "AddressSanitizer", "LeakSanitizer")):
        return "sanitizer: " + p.stderr.strip().splitlines()[0], errs
    if "--time-limit" in argv and wall > 3 * LIMIT + 10:
        return "ran %.1f s with --time-limit %d" % (wall, LIMIT), errs
    if p.returncode != 0:
        if len(errs) != 1:
            return "%d error: lines" % len(errs), errs
        if "internal error" in errs[0]:
            return errs[0], errs
        if out and (os.path.exists(out) or os.path.exists(report)):
            return "an output was left by a failed run", errs
        return None, errs
    if out:
        import onnx
        try:
            onnx.load(out, load_external_data=False)
            json.load(open(report))
        except Exception as e:  # noqa: BLE001 - any failure to read is a finding
            return "output unreadable: %s" % e, errs
    return None, errs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("seconds", type=float)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-runs", type=int, default=0,
                    help="stop after this many runs too (0: no cap): with a --seed, the same inputs on any machine")
    ap.add_argument("--out", default=None)
    ap.add_argument("--shared", default=os.path.join(HERE, "..", "..", "..", "shared"))
    a = ap.parse_args()
    try:
        import onnx  # noqa: F401
    except ImportError:
        print("skipped: the onnx Python module is missing (apt install python3-onnx)")
        return 0
    rng = random.Random(a.seed)
    seeds = load_seeds(a.shared)
    if not seeds:
        print("skipped: no seed models (neither %s/models nor test/lit/Inputs/models)" % a.shared)
        return 0
    if not os.path.isdir(os.path.join(a.shared, "models")):
        print("note: %s/models is absent; mutating the project's text models only" % a.shared)
    out = a.out or tempfile.mkdtemp(prefix="onnxp-model-mut.")
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="run.", dir=out)
    runs, codes, messages, findings = collections.Counter(), collections.Counter(), set(), []
    start, n = time.time(), 0
    while time.time() - start < a.seconds and not (a.max_runs and n >= a.max_runs):
        name, model = rng.choice(seeds)
        m = type(model)()
        m.CopyFrom(model)
        kinds = [k for k in (rng.choice(MUTATORS)(rng, m) for _ in range(rng.randint(1, 3))) if k]
        if not kinds:
            continue
        inp = os.path.join(work, "m.onnx")
        with open(inp, "wb") as f:
            f.write(m.SerializeToString())
        for f in ("o.onnx", "o.onnx.data", "r.json"):
            if os.path.exists(os.path.join(work, f)):
                os.unlink(os.path.join(work, f))
        argv, o, r = argv_for(rng, a.tool, inp, work)
        n += 1
        runs[(name, kinds[0])] += 1
        began = time.time()
        try:
            p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=120)
        except subprocess.TimeoutExpired:
            problem, errs = "timeout (120 s)", []
        else:
            codes[p.returncode] += 1
            problem, errs = check(p, argv, o, r, time.time() - began)
        if errs:
            messages.add(errs[0].split(":")[1] if ":" in errs[0] else errs[0])
        if problem:
            findings.append((problem, "+".join(kinds), argv))
            shutil.copy(inp, os.path.join(out, "finding-%d-%s" % (len(findings), name.replace(".onnxtxt", ".onnx"))))
    shutil.rmtree(work, ignore_errors=True)
    print("runs: %d in %.0f s (seed %d), %d seed models" % (n, time.time() - start, a.seed, len(seeds)))
    kinds = collections.Counter()
    for (_, k), c in runs.items():
        kinds[k] += c
    print("mutations: " + ", ".join("%s %d" % kv for kv in sorted(kinds.items())))
    print("exit codes: " + ", ".join("%d: %d" % kv for kv in sorted(codes.items())))
    print("distinct error kinds: %d" % len(messages))
    print("findings: %d" % len(findings))
    for problem, kinds, argv in findings:
        print("  FINDING: %s (%s)\n    %s" % (problem, kinds, " ".join(argv)))
    if findings:
        print("inputs of findings in " + out)
    else:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
