#!/usr/bin/env python3
"""Issue 38, item 5: `onnx-partition --algo rotor` side by side with rotor's
own C code (Inria's rotor, RR-9302: `dynamic_programs.c`,
`persistent_compute_table`), on the chains of ../shared/workloads/pipedream/
by layers (and any chain JSON given with --chain NAME=FILE:MEMORY).

    tools/bench/rotor_reference.py [--runs 3] [--steps 50] [--chain NAME=FILE:MEM ...]

Rotor's source comes from $ROTOR_C (the path of dynamic_programs.c) or
$ROTOR_GIT_DIR (a git dir holding rotor/algorithms/dynamic_programs.c, at
$ROTOR_COMMIT or HEAD; e.g. a clone of gitlab.inria.fr/hiepacs/rotor, or of
topal-team/rockmate at e7cbbd3933dce7e225945727dc785cd75b2d217c, which
carries it). It is built untouched as the Python extension its setup.py
builds (Python's own compiler flags) in a scratch folder ($ROTOR_SCRATCH,
default /tmp/rotor-ref) -- never copied into the repository. Without it the
reference columns are skipped with a message.

For each chain: our tool plans it ($ONNX_PARTITION, default
build/tools/onnx-partition; `--report` gives the slot size and budget), the
chain is discretized exactly as lib/Partition/remat/RematChain.cpp does
(each tensor rounded up to whole slots) into rotor's arrays, and rotor's
persistent_compute_table(chain, budget) runs in this process. Both values
must agree (rotor's opt[budget - cw0][0][L] against our DP's makespan).
CPU seconds: "ours, process" is the child process's user + system time
(the whole run: start, loading, planning, pricing, report); "ours, call" is
time.process_time() around onnx_partition.partition() in this process (the
Python module of build/python: loading the chain JSON, planning, pricing),
when the module is built; rotor's is time.process_time() around its call
(its table and the Python lists it returns; loading and discretizing are
not counted). Medians of --runs. Run it with the interpreter the Python
module was built for (/usr/bin/python3 here).
"""
import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.environ.get("ONNX_PARTITION", os.path.join(ROOT, "build", "tools", "onnx-partition"))
SHARED = os.path.join(ROOT, "..", "shared")
SCRATCH = os.environ.get("ROTOR_SCRATCH", "/tmp/rotor-ref")

# The memories of docs/benchmarks/performance-round.md (item 5).
PIPEDREAM = [("alexnet", "2GB"), ("gnmt", "4GB"), ("resnet18", "4GB"), ("resnet50", "4GB"),
             ("resnext50", "4GB"), ("squeezenet1_0", "8GB"), ("vgg16", "16GB")]


def build_rotor():
    """Builds rotor's dynamic_programs extension; returns the module or None."""
    src = os.environ.get("ROTOR_C")
    os.makedirs(SCRATCH, exist_ok=True)
    target = os.path.join(SCRATCH, "dynamic_programs.c")
    if src and os.path.isfile(src):
        shutil.copyfile(src, target)
    elif os.environ.get("ROTOR_GIT_DIR"):
        rev = os.environ.get("ROTOR_COMMIT", "HEAD")
        with open(target, "wb") as out:
            subprocess.run(["git", "--git-dir", os.environ["ROTOR_GIT_DIR"], "show",
                            rev + ":rotor/algorithms/dynamic_programs.c"], stdout=out, check=True)
    else:
        print("skipped the reference: set ROTOR_C or ROTOR_GIT_DIR (see the header)")
        return None
    import sysconfig
    cc = (sysconfig.get_config_var("CC") or "cc").split()
    flags = (sysconfig.get_config_var("CFLAGS") or "").split() + (sysconfig.get_config_var("CCSHARED") or "").split()
    ext = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    lib = os.path.join(SCRATCH, "dynamic_programs" + ext)
    subprocess.run(cc + flags + ["-I" + sysconfig.get_paths()["include"], "-shared", target, "-o", lib, "-lm"],
                   check=True)
    sys.path.insert(0, SCRATCH)
    import dynamic_programs  # noqa: E402
    return dynamic_programs


def run_tool(args):
    """Runs the tool; returns (CPU seconds of the child, its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([TOOL] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit("error: %s %s failed: %s" % (TOOL, " ".join(args), out.stderr.strip()))
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out.stdout


def slots(nbytes, slot):
    """RematChain.cpp's rounding: a tensor of exactly k slots stays k."""
    q = nbytes / slot
    return max(0, int(math.ceil(q - 1e-9 * max(1.0, q))))


class RotorChain:
    """The attributes persistent_compute_table reads (rotor's Chain): rotor's
    blocks 0..L, block L being the loss; the C code appends one 0 to each
    array (cw[L+1] = cbw[L+1] = 0)."""

    def __init__(self, chain, slot, loss_ms):
        blocks = chain["blocks"]
        L = len(blocks)
        self.length = L  # rotor's blocks 0..L, L being the loss
        self.forward_durations = [b["forwardTime"] for b in blocks] + [0.0]
        self.backward_durations = [b["backwardTime"] for b in blocks] + [loss_ms]
        a = [slots(chain["inputBytes"], slot)] + [slots(b["outputBytes"], slot) for b in blocks]
        abar = [0] + [max(a[k + 1], slots(b["storedBytes"], slot)) for k, b in enumerate(blocks)]
        self.activation_sizes = a
        self.activation_total_usages = abar
        self.forward_memory_tmp_sizes = [slots(b.get("forwardOverhead", 0), slot) for b in blocks] + [0]
        self.backward_memory_tmp_sizes = [slots(b.get("backwardOverhead", 0), slot) for b in blocks] + [0]
        # The same arrays under the names of rotor's Chain (rotor/algorithms/utils.py),
        # which older versions of dynamic_programs.c read.
        self.fweigth, self.bweigth = self.forward_durations, self.backward_durations
        self.cweigth, self.cbweigth = self.activation_sizes, self.activation_total_usages
        self.fwd_tmp, self.bwd_tmp = self.forward_memory_tmp_sizes, self.backward_memory_tmp_sizes


def load_ours():
    """The Python module of build/python, or None."""
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    try:
        import onnx_partition  # noqa: E402
        return onnx_partition
    except ImportError as e:
        print("no in-process column: %s" % e)
        return None


def bench(name, source, memory, args, dp, ours_mod, tmp):
    chain_file = os.path.join(tmp, name + ".chain.json")
    report = os.path.join(tmp, name + ".report.json")
    if source.endswith(".json"):
        chain_file = source
    else:
        run_tool(["chain", source, "--chain-recipe", "layers", "-o", chain_file])
    ours = []
    for _ in range(args.runs):
        cpu, _ = run_tool([chain_file, "--algo", "rotor", "--memory", memory, "--memory-steps", str(args.steps),
                           "--report", report])
        ours.append(cpu)
    with open(report) as f:
        rep = json.load(f)
    sched = find_schedule(rep)
    with open(chain_file) as f:
        chain = json.load(f)
    row = {"chain": name, "memory": memory, "blocks": len(chain["blocks"]), "slots": sched["budget_slots"],
           "ours_ms": sched["dp_makespan_ms"], "ours_cpu": statistics.median(ours)}
    if ours_mod is not None:
        calls = []
        ours_mod.partition(chain_file, algo="rotor", memory=memory, memory_steps=args.steps, stages=False,
                           annotate=False)  # untimed: the module's first call sets things up
        for _ in range(args.runs):
            t0 = time.process_time()
            ours_mod.partition(chain_file, algo="rotor", memory=memory, memory_steps=args.steps, stages=False,
                               annotate=False)
            calls.append(time.process_time() - t0)
        row["ours_call"] = statistics.median(calls)
    if dp is not None:
        rc = RotorChain(chain, sched["slot_bytes"], sched.get("loss_ms", 0.0))
        budget = int(sched["budget_slots"])
        theirs = []
        for _ in range(args.runs):
            t0 = time.process_time()
            opt, _what = dp.persistent_compute_table(rc, budget)
            theirs.append(time.process_time() - t0)
        root = budget - rc.activation_sizes[0]
        value = opt[root][0][rc.length] if root >= 0 else float("inf")
        row["rotor_ms"] = value
        row["rotor_cpu"] = statistics.median(theirs)
        if not math.isclose(value, row["ours_ms"], rel_tol=1e-9, abs_tol=1e-9):
            print("warning: %s: rotor's value %.9g differs from ours %.9g" % (name, value, row["ours_ms"]))
    return row


def find_schedule(rep):
    """The activation schedule in the plan report (wherever the report nests it)."""
    if isinstance(rep, dict):
        if rep.get("kind") == "activation" or "slot_bytes" in rep:
            return rep
        for v in rep.values():
            s = find_schedule(v)
            if s is not None:
                return s
    elif isinstance(rep, list):
        for v in rep:
            s = find_schedule(v)
            if s is not None:
                return s
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--chain", action="append", default=[], help="NAME=FILE:MEMORY (a chain JSON or a model)")
    args = p.parse_args()
    if not os.access(TOOL, os.X_OK):
        raise SystemExit("error: build onnx-partition first (%s)" % TOOL)
    todo = []
    for name, mem in PIPEDREAM:
        path = os.path.join(SHARED, "workloads", "pipedream", name + ".txt")
        if os.path.isfile(path):
            todo.append((name, path, mem))
    if not todo and not args.chain:
        print("skipped: ../shared/workloads/pipedream is absent")
        return
    for spec in args.chain:
        name, rest = spec.split("=", 1)
        path, mem = rest.rsplit(":", 1)
        todo.append((name, path, mem))
    dp = build_rotor()
    ours_mod = load_ours()
    print("| chain | blocks | --memory | slots | iteration (ours) | rotor's value | ours, process CPU s | "
          "ours, call CPU s | rotor's C, call CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, mem in todo:
            r = bench(name, path, mem, args, dp, ours_mod, tmp)
            print("| %s | %d | %s | %d | %.6g ms | %s | %.3f | %s | %s |" % (
                r["chain"], r["blocks"], r["memory"], r["slots"], r["ours_ms"],
                "%.6g ms" % r["rotor_ms"] if "rotor_ms" in r else "-", r["ours_cpu"],
                "%.3f" % r["ours_call"] if "ours_call" in r else "-",
                "%.3f" % r["rotor_cpu"] if "rotor_cpu" in r else "-"), flush=True)


if __name__ == "__main__":
    main()
