#!/usr/bin/env python3
"""Sends SIGINT, SIGTERM, SIGHUP or SIGQUIT to onnx-partition while it
writes its outputs (SIGHUP and SIGQUIT since issue 25).

  signal_during_write.py TOOL MODEL DIR INT|TERM|HUP|QUIT

ONNXP_TEST_COMMIT_DELAY_MS makes the tool pause after every temporary is
written and before any is renamed into place; the signal arrives during
that pause, once all temporaries exist. Two runs per call:

  fresh:  nothing existed before -> afterwards no -o, no --report, no stage
          file and no *.tmp-* file exist;
  reused: an earlier run's outputs exist (a 2-stage plan), the interrupted
          run writes a 3-stage plan over them -> afterwards the earlier
          files are byte-identical (not clobbered, not partial) and no
          *.tmp-* file exists.

The tool must die by the signal (the handler removes the temporaries and
re-raises it). Prints one line per check; exits 1 on the first failure.
"""
import os
import resource
import signal
import subprocess
import sys
import time

tool, model, base, which = sys.argv[1:5]
SIG = {"INT": signal.SIGINT, "TERM": signal.SIGTERM, "HUP": signal.SIGHUP, "QUIT": signal.SIGQUIT}[which]


def child_setup():
    # The default disposition even when this test runs under nohup (the
    # tool leaves an ignored SIGHUP ignored), and no core file for SIGQUIT.
    signal.signal(SIG, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def files(d):
    out = {}
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, d)] = f.read()
    return out


PLANS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plans")


def argv(d, devices):
    # MODEL is the mlp of Inputs/models; its hand plans give 2 and 3 stages.
    plan = os.path.join(PLANS, "mlp-%d-contig.json" % devices)
    return [tool, model, "--load-plan", plan, "--devices", str(devices),
            "-o", os.path.join(d, "out.onnx"), "--report", os.path.join(d, "report.json"),
            "--emit-stages", os.path.join(d, "stages")]


def interrupted(d, devices):
    env = dict(os.environ, ONNXP_TEST_COMMIT_DELAY_MS="20000")
    p = subprocess.Popen(argv(d, devices), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         preexec_fn=child_setup)
    deadline = time.time() + 60
    # Wait until the temporaries of -o, --report and the stages exist.
    while time.time() < deadline:
        tmps = [n for n in files(d) if ".tmp-" in n]
        if any(n.startswith("out.onnx.tmp-") for n in tmps) and any(n.startswith("report.json.tmp-") for n in tmps) \
                and any(n.startswith("stages" + os.sep) for n in tmps):
            break
        if p.poll() is not None:
            fail("the tool ended before the signal: exit %s, %s" % (p.returncode, p.stderr.read().decode()))
        time.sleep(0.05)
    else:
        p.kill()
        fail("no temporaries appeared within 60 s")
    print("%s: temporaries before the signal: %d" % (os.path.basename(d), len(tmps)))
    p.send_signal(SIG)
    p.wait(timeout=60)
    if p.returncode != -SIG:
        fail("exit status %s, expected death by SIG%s" % (p.returncode, which))
    print("%s: died by SIG%s" % (os.path.basename(d), which))


# Fresh folder: nothing may appear.
fresh = os.path.join(base, "fresh-" + which)
os.makedirs(os.path.join(fresh, "stages"), exist_ok=True)
interrupted(fresh, 3)
left = sorted(files(fresh))
if left:
    fail("files left in a fresh folder: %s" % left)
print("fresh: no files left")

# Reused folder: the earlier run's files stay byte-identical.
reused = os.path.join(base, "reused-" + which)
os.makedirs(os.path.join(reused, "stages"), exist_ok=True)
subprocess.run(argv(reused, 2), check=True, stdout=subprocess.DEVNULL)
before = files(reused)
interrupted(reused, 3)
after = files(reused)
if any(".tmp-" in n for n in after):
    fail("temporaries left: %s" % [n for n in after if ".tmp-" in n])
if after != before:
    fail("the earlier outputs changed: %s" % sorted(set(before) ^ set(after)
                                                      or [n for n in before if before[n] != after.get(n)]))
print("reused: %d earlier files intact, no temporaries" % len(before))
