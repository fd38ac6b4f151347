#!/usr/bin/env python3
"""model_study.py FOLDER [--build BUILD] [--work DIR] [--only SUBSTRING]...

Issue 37's user study, on any folder of third-party ONNX models: for every
*.onnx in FOLDER (sorted by name) it runs what a user would run and prints
one markdown row per model:

  ORT loads   onnxruntime-node opens the original (what ORT refuses is not
              a bug of ours; the row says so)
  imported    `onnx-partition inspect MODEL` exits 0
  planned     `onnx-partition MODEL --devices 2` (the default algorithm)
  written     the same run with -o and --emit-stages
  reproduced  tools/ort-runner/run_pipeline.js on those stages against the
              original (max abs error over the micro-batches)
  dp stages   `--algo dp --devices 2 --emit-stages`: a contiguous cut into
              two stages when dp finds one worth it, run the same way (the
              default often replicates a small model instead of cutting it)
  --training  forward-only models with weights: `--training --devices 2`
              plans (the derived backward is priced, not written)
  first error the first `error:` (or FAIL) line of the first step that failed

Symbolic dimensions of the graph inputs are bound to 1 (--dim NAME=1), or
to MODEL.dims's values beside the model (lines NAME=V), for the tool and
the runner alike; MODEL.data/input_K.pb (ONNX's test_data_set_0 layout)
feeds the runner's K-th graph input. When the stages do not reproduce, the
whole graph as one stage runs on the same inputs: "whole graph too" means
ONNX Runtime cannot run the model on them, whatever the plan. Models stay
outside the repository
(docs/benchmarks/model-study.md lists where each came from). Exits 0 with
a message when FOLDER is absent; never run by the tests.

  /usr/bin/python3 tools/bench/model_study.py /work/study-models --build build
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RUNNER = os.path.join(REPO, "tools", "ort-runner", "run_pipeline.js")
ORT_NODE = os.path.join(REPO, "tools", "ort-runner", "node_modules", "onnxruntime-node")
TIMEOUT = 600

# Opens MODEL in onnxruntime-node, graph optimizations off as the runner
# runs it; prints "ok" or the first line of ORT's refusal.
ORT_LOAD_JS = r"""
const ort = require(process.argv[1]);
ort.InferenceSession.create(process.argv[2], {graphOptimizationLevel: 'disabled'})
  .then(() => console.log('ok'), e => { console.log(String(e.message).split('\n')[0]); });
"""


def run(cmd, timeout=TIMEOUT):
    """(exit status, stdout + stderr); a timeout is status -1."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout, env=dict(os.environ, ONNX_PARTITION_QUIET="1"))
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return -1, out + "\nerror: timed out after %d s" % timeout


def first_error(out):
    """The line a user reads first: an error, else a failing check."""
    lines = out.splitlines()
    for pattern in (r"^error\b", r"\berror:", r"\bFAIL\b", r"(?i)error"):
        for line in lines:
            if re.search(pattern, line):
                return line.strip()
    return lines[-1].strip() if lines else "(no output)"


def symbolic_dims(model):
    """--dim NAME=V for every dim_param of the graph inputs (not
    initializers): V from MODEL.dims beside the model (lines NAME=V, what
    the model's users know, e.g. an MLP's 784 features), else 1. Also the
    runner's --input NAME=FILE for MODEL.data/input_K.pb (ONNX's
    test_data_set_0 layout), and what kind of model it is."""
    import onnx
    m = onnx.load(model, load_external_data=False)
    known = {}
    dims_file = os.path.splitext(model)[0] + ".dims"
    if os.path.isfile(dims_file):
        for line in open(dims_file):
            if "=" in line:
                k, v = line.strip().split("=", 1)
                known[k] = v
    inits = {i.name for i in m.graph.initializer}
    feeds = [i for i in m.graph.input if i.name not in inits]
    names = []
    for i in feeds:
        if not i.type.HasField("tensor_type"):
            continue
        for d in i.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param not in names:
                names.append(d.dim_param)
    dims = [a for n in names for a in ("--dim", "%s=%s" % (n, known.get(n, "1")))]
    inputs = []
    data = os.path.splitext(model)[0] + ".data"
    for k, i in enumerate(feeds):
        pb = os.path.join(data, "input_%d.pb" % k)
        if os.path.isfile(pb):
            inputs += ["--input", "%s=%s" % (i.name, pb)]
    return dims, inputs, len(m.graph.node), is_training_graph(m), has_weights(m)


def is_training_graph(m):
    """An exported training graph: gradient or optimizer ops in it."""
    return any(n.op_type.endswith("Grad") or n.op_type in ("Gradient", "InPlaceAccumulatorV2",
               "SoftmaxCrossEntropyLossInternal", "AdamOptimizer", "AdamWOptimizer")
               or n.domain == "ai.onnx.preview.training" for n in m.graph.node)


def has_weights(m):
    return any(len(i.dims) >= 1 and i.data_type == 1 for i in m.graph.initializer)


def reproduced(stage_dir, model, feeds, micro):
    """The runner on the stages: ('yes (max abs E)' | 'no', error)."""
    if not os.path.isfile(os.path.join(stage_dir, "pipeline.json")):
        return "-", ""
    rc, out = run(["node", RUNNER, stage_dir, "--original", model, "--micro-batches", str(micro)] + feeds)
    m = re.search(r"check: .*max abs error ([^,]+),", out)
    err = m.group(1) if m else "?"
    if rc == 0 and out.rstrip().endswith("PASS"):
        return "yes (%s)" % err, ""
    return "no (%s)" % err if m else "no", first_error(out)


def study(model, args):
    name = os.path.splitext(os.path.basename(model))[0]
    work = os.path.join(args.work, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    row = {"model": name}
    try:
        dims, inputs, nodes, training, weights = symbolic_dims(model)
    except Exception as e:  # the onnx module refuses it: say so, carry on
        dims, inputs, nodes, training, weights = [], [], "?", False, False
        row["error"] = "onnx.load: %s" % str(e).splitlines()[0]
    row["nodes"] = nodes
    row["kind"] = "training" if training else "inference"
    rc, out = run(["node", "-e", ORT_LOAD_JS, ORT_NODE, model], timeout=120)
    last = out.strip().splitlines()[-1] if out.strip() else ""
    row["ort"] = "yes" if last == "ok" else "no: " + last[:120]
    tool = os.path.join(args.build, "tools", "onnx-partition")
    errors = []
    rc, out = run([tool, "inspect", model] + dims)
    row["imported"] = "yes" if rc == 0 else "no"
    if rc != 0:
        errors.append(first_error(out))
    plan = [tool, model, "--devices", "2", "--time-limit", "60"] + dims
    rc, out = run(plan + ["-o", os.path.join(work, "out.onnx"), "--emit-stages", os.path.join(work, "auto")])
    row["planned"] = row["written"] = "yes" if rc == 0 else "no"
    if rc != 0:
        errors.append(first_error(out))
        rc2, out2 = run(plan)
        row["planned"] = "yes" if rc2 == 0 else "no"
    feeds = dims + inputs
    row["reproduced"], e = reproduced(os.path.join(work, "auto"), model, feeds, args.micro_batches)
    if e:
        errors.append(e)
        # The whole graph as one stage on the same inputs: when that fails
        # as well, ORT cannot run the model on these inputs (an index out of
        # its table, a broken export), whatever the plan.
        rc1, out1 = run([tool, model, "--algo", "single", "--devices", "1", "--emit-stages",
                         os.path.join(work, "single")] + dims)
        one, e1 = reproduced(os.path.join(work, "single"), model, feeds, 1) if rc1 == 0 else ("-", "")
        if one.startswith("no"):
            row["reproduced"] += "; whole graph too"
            errors[-1] = "ORT fails on the whole graph with these inputs: " + e1
    rc, out = run(plan + ["--algo", "dp", "--emit-stages", os.path.join(work, "dp")])
    if rc != 0:
        row["dp"] = "no"
        errors.append(first_error(out))
    else:
        stages = len(json.load(open(os.path.join(work, "dp", "pipeline.json"))).get("stages", []))
        r, e = reproduced(os.path.join(work, "dp"), model, feeds, args.micro_batches)
        row["dp"] = "%d: %s" % (stages, r)
        if e:
            errors.append(e)
    if not training and weights:
        rc, out = run(plan + ["--training"])
        row["training"] = "yes" if rc == 0 else "no"
        if rc != 0:
            errors.append(first_error(out))
    else:
        row["training"] = "-"
    # onnxruntime-node has no training kernels; the runner runs training
    # stages and their reference in the training build (ort_backends.js).
    if row["ort"] != "yes" and str(row["reproduced"]).startswith("yes"):
        row["ort"] = "yes (training build)"
    row.setdefault("error", errors[0] if errors else "")
    return row


COLUMNS = [("model", "model"), ("nodes", "nodes"), ("kind", "kind"), ("ort", "ORT loads"),
           ("imported", "imported"), ("planned", "planned"), ("written", "written"),
           ("reproduced", "reproduced (max abs)"), ("dp", "dp: stages, reproduced"),
           ("training", "--training plans"), ("error", "first error")]


def cell(v):
    return str(v).replace("|", "\\|")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--work", default=None, help="where outputs go (default: a folder beside FOLDER's name in /tmp)")
    ap.add_argument("--only", action="append", default=[], help="models whose name contains this (repeatable)")
    ap.add_argument("--micro-batches", type=int, default=2)
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    if not os.path.isdir(args.folder):
        print("skipped: %s is absent" % args.folder)
        return 0
    if not os.path.isfile(os.path.join(args.build, "tools", "onnx-partition")):
        print("error: no onnx-partition in %s/tools: build it or give --build" % args.build, file=sys.stderr)
        return 2
    if not os.path.isdir(ORT_NODE):
        print("error: %s is absent: run `bash tools/setup.sh deps`" % ORT_NODE, file=sys.stderr)
        return 2
    args.work = args.work or os.path.join("/tmp", "model-study-" + os.path.basename(os.path.abspath(args.folder)))
    os.makedirs(args.work, exist_ok=True)
    models = sorted(glob.glob(os.path.join(args.folder, "*.onnx")))
    if args.only:
        models = [m for m in models if any(s in os.path.basename(m) for s in args.only)]
    print("| " + " | ".join(h for _, h in COLUMNS) + " |")
    print("|" + " --- |" * len(COLUMNS))
    rows = []
    for model in models:
        row = study(model, args)
        rows.append(row)
        print("| " + " | ".join(cell(row.get(k, "")) for k, _ in COLUMNS) + " |", flush=True)
    ort_ok = [r for r in rows if r["ort"].startswith("yes")]
    def count(key):
        return sum(1 for r in ort_ok if str(r[key]).startswith("yes"))
    print("\n%d models; ORT loads %d; of those: imported %d, planned %d, written %d, reproduced %d" %
          (len(rows), len(ort_ok), count("imported"), count("planned"), count("written"), count("reproduced")))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
