#!/usr/bin/env python3
"""CLI-level mutation fuzz of the chain planners (issue 25).

  chain_planner_mutations.py TOOL SECONDS [--seed N] [--out DIR] [--shared DIR]

Mutates chain inputs -- chain JSON, PipeDream profiles, Piper input -- and
platform files, runs `onnx-partition INPUT --algo ALGO --platform P` through
the chain planners, and checks every run: exit code 0, 1 or 2; on failure
exactly one stderr line starting with "error:" and none saying "internal
error"; no sanitizer report ("runtime error:", "AddressSanitizer",
"LeakSanitizer"); no death by a signal; on success, a --report that
json.load reads. Mutations are what the issue-25 audit found dangerous:
extreme finite numbers (1e308, 1e-300, 1e18, 2^63), zero, negative and
non-numeric values, wrong JSON types, deleted fields, names with markup,
deep list nesting in profiles, and platforms with extreme bandwidths. A
third of the runs are plausible instead: a random well-formed chain (2-8
blocks, times and sizes over many decades, odd byte counts) under a
--memory near what it needs, not a whole number of bytes; those reach the
planners' arithmetic at the budget's edge, where the issue-25 replay
finding lived (a plan exactly at its budget measured a ten-thousandth of
a byte above it).

Bounded by SECONDS (wall clock). Every run of a planner that reads
--time-limit gets 3 s; one that takes more than 3x that, or any run that
hits the 120 s timeout, is a finding. Prints
the number of runs per format and algorithm, the exit-code histogram, the
number of distinct messages and every finding (input kept in --out).
Exits 1 on a finding. Deterministic for a --seed (up to timing).
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
LIMIT = 3  # --time-limit of every run of a searching planner, seconds
TIMED = ("pipeline-ilp", "offload-activations", "offload-weights")  # the ones that read --time-limit
SEEDS = os.path.join(HERE, "seeds")
ALGOS = ["pipeline-pipedream", "pipeline-ilp", "rotor", "offload-activations", "offload-weights"]
EXTREME = [1e308, -1e308, 1e-300, 5e-324, 1e18, 1e19, 2.0 ** 63, 2.0 ** 64, 0, -0.0, -1, -2, 1e12, 1e13,
           0.5, 4294967297, "abc", "", None, True, [], {}, [1], "1e3"]
NAMES = ["x</title><script>alert(1)</script>", "a&b", "q\"uote", "back\\slash", "nl\nline", "\u00e9\u4e2d",
         "", " ", "<![CDATA[", "]]>", "&amp;", "\t"]


def mutate_json(rng, obj, depth=0):
    """A copy of obj with a few random changes."""
    obj = json.loads(json.dumps(obj))
    paths = []

    def walk(o, path):
        paths.append(path)
        if isinstance(o, dict):
            for k in o:
                walk(o[k], path + [k])
        elif isinstance(o, list):
            for i, v in enumerate(o):
                walk(v, path + [i])

    walk(obj, [])
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(paths[1:] or [[]])
        parent = obj
        for p in path[:-1]:
            try:
                parent = parent[p]
            except (KeyError, IndexError, TypeError):
                parent = None
                break
        if not isinstance(parent, (dict, list)) or not path:
            continue  # a string indexes like a list but cannot be assigned to
        key = path[-1]
        try:
            old = parent[key]
        except (KeyError, IndexError, TypeError):
            continue
        r = rng.random()
        if r < 0.55:
            new = rng.choice(EXTREME)
        elif r < 0.7:
            new = rng.choice(NAMES)
        elif r < 0.8 and isinstance(parent, dict):
            del parent[key]
            continue
        elif r < 0.9 and isinstance(old, list) and old:
            old.extend(json.loads(json.dumps(old)) * rng.randint(1, 3))
            continue
        else:
            new = old * rng.choice([1e300, 1e-300, -1]) if isinstance(old, (int, float)) and not isinstance(old, bool) else rng.choice(EXTREME)
        parent[key] = new
    return obj


def dumps(obj):
    # Infinity is not JSON; the tool must say so, but mostly keep inputs JSON.
    return json.dumps(obj, allow_nan=True)


def mutate_profile(rng, text):
    lines = text.splitlines()
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        line = lines[i]
        r = rng.random()
        if r < 0.6 and "=" in line:
            parts = line.split(", ")
            j = rng.randrange(len(parts))
            k, _, _ = parts[j].partition("=")
            v = rng.choice(["1e308", "1e-300", "1e18", "1e12", "0", "-1", "nan", "inf", "abc", "",
                            "[1e308; 1e308]", "[" * 40 + "1" + "]" * 40, "[[1; 2]; [3; [4]]]", "[]", "[1;]"])
            parts[j] = k + "=" + v
            lines[i] = ", ".join(parts)
        elif r < 0.7:
            lines.insert(i, rng.choice(["# comment", "", "\t", "nodeX -- -- ", "\tnode1 -- node1"]))
        elif r < 0.8:
            del lines[i]
        elif r < 0.9:
            lines.append(lines[i])
        else:
            lines[i] = line.replace("node", rng.choice(NAMES).replace("\n", ""), 1)
    return "\n".join(lines) + "\n"


def plausible_chain(rng):
    """A well-formed chain and a --memory near the least it needs."""
    def size():
        return int(10 ** rng.uniform(3, 8)) + rng.randint(0, 7)
    blocks = []
    for i in range(rng.randint(2, 8)):
        b = {"name": "b%d" % i, "forwardTime": 10 ** rng.uniform(-3, 5), "backwardTime": 10 ** rng.uniform(-3, 5),
             "outputBytes": size(), "weightBytes": rng.choice([0, 0, size()])}
        if rng.random() < 0.3:
            b["storedBytes"] = size()
        blocks.append(b)
    chain = {"format": "onnx-partition-chain", "name": "plausible", "units": {"time": "ms", "size": "bytes"},
             "inputBytes": size(), "blocks": blocks}
    total = chain["inputBytes"] + sum(max(b["outputBytes"], b.get("storedBytes", 0)) * 2 for b in blocks)
    total += sum(b["weightBytes"] for b in blocks) * 4
    return chain, total * rng.uniform(0.2, 1.5)


def platform(rng):
    p = {"base": "a100", "accelerators": rng.choice([1, 2, 3, 4, 8])}
    for k in ("peerLinkBandwidth", "hostLinkBandwidth"):
        if rng.random() < 0.4:
            p[k] = rng.choice([1e-300, 5e-324, 1e-3, 1, 1e308, 2.5e10])
    if rng.random() < 0.5:
        p["accelerator"] = {"memoryBytes": rng.choice([1, 1e3, 1e6, 1e9, 1e12, 1e18, 1e300, "40GiB"])}
    return p


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
    rng = random.Random(a.seed)
    out = a.out or tempfile.mkdtemp(prefix="onnxp-chain-mut.")
    os.makedirs(out, exist_ok=True)

    seeds = []  # (format, text)
    for d, fmt in (("chain-json", "chain"), ("pipedream", "profile"), ("piper", "piper")):
        for f in sorted(os.listdir(os.path.join(SEEDS, d))):
            seeds.append((fmt, open(os.path.join(SEEDS, d, f), encoding="utf-8").read()))
    lit_chains = os.path.join(HERE, "..", "lit", "Inputs", "chains")
    for f in sorted(os.listdir(lit_chains)):
        seeds.append(("chain", open(os.path.join(lit_chains, f)).read()))
    pd = os.path.join(a.shared, "workloads", "pipedream")
    if os.path.isdir(pd):
        for f in sorted(os.listdir(pd)):
            seeds.append(("profile", open(os.path.join(pd, f)).read()))

    runs = collections.Counter()
    codes = collections.Counter()
    messages = set()
    findings = []
    start = time.time()
    n = 0
    work = tempfile.mkdtemp(prefix="run.", dir=out)
    while time.time() - start < a.seconds and not (a.max_runs and n >= a.max_runs):
        fmt, text = rng.choice(seeds)
        memory = None
        try:
            if rng.random() < 1 / 3:
                fmt = "plausible"
                chain, memory = plausible_chain(rng)
                body = dumps(chain)
                name = "c.json"
            elif fmt == "profile":
                body = mutate_profile(rng, text)
                name = rng.choice(["p.txt", "a&b<c.txt"])
            else:
                body = dumps(mutate_json(rng, json.loads(text)))
                name = "c.json"
        except (ValueError, RecursionError):
            continue
        algo = rng.choice(ALGOS)
        inp = os.path.join(work, name)
        with open(inp, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(body)
        plat = os.path.join(work, "platform.json")
        with open(plat, "w") as f:
            if fmt == "plausible":
                json.dump({"base": "a100", "accelerators": rng.choice([1, 2, 4]),
                           "hostLinkBandwidth": 10 ** rng.uniform(9, 11.5)}, f)
            else:
                json.dump(platform(rng), f)
        report = os.path.join(work, "report.json")
        if os.path.exists(report):
            os.unlink(report)
        argv = [a.tool, inp, "--algo", algo, "--platform", plat, "--report", report]
        if memory is not None:
            argv += ["--memory", repr(memory)]
        # Every run has a limit: the limit is a promise (issue 20), and a run
        # that ends past 3x its limit is a finding (3x: the machine may be loaded).
        if algo in TIMED:
            argv += ["--time-limit", str(LIMIT)]
        if algo in ("rotor", "offload-activations") and rng.random() < 0.3:
            argv += ["--memory-steps", str(rng.choice([1, 2, 50, 100000, 100001, 4294967297, -1, 0]))]
        if fmt == "piper" and rng.random() < 0.3:
            argv += ["--batch-size", str(rng.choice([0, 1, 1e6, 1e7, 1e300, -1]))]
        n += 1
        runs[(fmt, algo)] += 1
        began = time.time()
        try:
            p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=120)
        except subprocess.TimeoutExpired:
            findings.append(("timeout (120 s)", argv))
            keep = os.path.join(out, "finding-%d-%s" % (len(findings), name))
            shutil.copy(inp, keep)
            shutil.copy(plat, keep + ".platform.json")
            continue
        codes[p.returncode] += 1
        errs = [l for l in p.stderr.splitlines() if l.startswith("error:")]
        problem = None
        wall = time.time() - began
        if p.returncode < 0 or p.returncode not in (0, 1, 2):
            problem = "exit %d" % p.returncode
        elif algo in TIMED and wall > 3 * LIMIT:
            problem = "ran %.1f s with --time-limit %g" % (wall, LIMIT)
        elif any(s in p.stderr for s in ("runtime error:", "AddressSanitizer", "LeakSanitizer")):
            problem = "sanitizer: " + p.stderr.strip().splitlines()[0]
        elif p.returncode != 0 and len(errs) != 1:
            problem = "%d error: lines" % len(errs)
        elif any("internal error" in l for l in errs):
            problem = errs[0]
        elif p.returncode == 0:
            try:
                json.load(open(report))
            except Exception as e:  # noqa: BLE001 - any failure to read is a finding
                problem = "report unreadable: %s" % e
        if errs:
            messages.add(errs[0].split(":")[1] if ":" in errs[0] else errs[0])
        if problem:
            findings.append((problem, argv))
            keep = os.path.join(out, "finding-%d-%s" % (len(findings), name))
            shutil.copy(inp, keep)
            shutil.copy(plat, keep + ".platform.json")
    shutil.rmtree(work, ignore_errors=True)
    el = time.time() - start
    print("runs: %d in %.0f s (seed %d)" % (n, el, a.seed))
    for (fmt, algo), c in sorted(runs.items()):
        print("  %-8s %-20s %d" % (fmt, algo, c))
    print("exit codes: " + ", ".join("%d: %d" % kv for kv in sorted(codes.items())))
    print("distinct error kinds: %d" % len(messages))
    print("findings: %d" % len(findings))
    for problem, argv in findings:
        print("  FINDING: %s\n    %s" % (problem, " ".join(argv)))
    print("inputs of findings in " + out)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
