#!/usr/bin/env python3
"""Two runs writing the same outputs at once (issue 39, item 9).

  concurrent_commits.py TOOL MODEL DIR

Run A (a 2-stage plan) renames its outputs slowly (the test hook
ONNXP_TEST_RENAME_DELAY_MS sleeps after each rename); run B (a 3-stage plan)
starts once A has renamed its first output. Without a lock B's renames
fall between A's and the folder ends with A's -o beside B's stages, or
the reverse. With the tool's folder locks B waits for A, and what is left
is exactly the set B writes alone. Prints one line per check; exits 1 on
the first failure.
"""
import os
import shutil
import subprocess
import sys
import time

tool, model, base = sys.argv[1:4]
PLANS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plans")
d = os.path.join(base, "out")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def argv(devices):
    plan = os.path.join(PLANS, "mlp-%d-contig.json" % devices)
    return [tool, model, "--load-plan", plan, "--devices", str(devices), "-o", os.path.join(d, "out.onnx"),
            "--emit-stages", os.path.join(d, "stages")]


def snapshot():
    out = {}
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, d)] = f.read()
    return out


def fresh():
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "stages"))


# What each run leaves when it runs alone.
fresh()
subprocess.run(argv(2), check=True, stdout=subprocess.DEVNULL)
alone_a = snapshot()
fresh()
subprocess.run(argv(3), check=True, stdout=subprocess.DEVNULL)
alone_b = snapshot()
if alone_a == alone_b:
    fail("the two plans write the same files; the test cannot tell them apart")

fresh()
a = subprocess.Popen(argv(2), env=dict(os.environ, ONNXP_TEST_RENAME_DELAY_MS="1500"), stdout=subprocess.DEVNULL)
deadline = time.time() + 60
seen = 0
while True:  # A's temporaries appear, then the first of them is renamed
    tmps = [n for n in snapshot() if ".tmp-" in n]
    seen = max(seen, len(tmps))
    if seen >= 3 and len(tmps) < seen:
        break
    if a.poll() is not None:
        fail("run A ended before the test saw its renames (exit %s)" % a.returncode)
    if time.time() > deadline:
        a.kill()
        fail("run A never started renaming")
    time.sleep(0.02)
print("A is renaming: %d temporaries, one in place" % seen)
b = subprocess.run(argv(3), stdout=subprocess.DEVNULL)
if a.wait(timeout=120) != 0 or b.returncode != 0:
    fail("exit codes A %s, B %s" % (a.returncode, b.returncode))
left = snapshot()
if left == alone_b:
    print("left: exactly B's outputs")
elif left == alone_a:
    print("left: exactly A's outputs")
else:
    mixed = sorted(n for n in left if left[n] != alone_b.get(n))
    fail("a mix of the two runs' outputs (not B's: %s)" % mixed)
