#!/usr/bin/env python3
"""Sends SIG to `onnx-partition calibrate --measure` while ONNX Runtime (a
fake profile.js that never ends and ignores SIGTERM) runs (issue 39, item 9).

  signal_during_measure.py TOOL MODEL DIR INT|TERM

Checks, one line each: the tool dies by the signal; the fake ORT process is
gone (stopped and reaped by the tool, not left running); DIR holds nothing
but what was there before (no --measure profile, no scratch folder, no
model written for ORT, no platform file). Exits 1 on the first failure.
"""
import os
import signal
import subprocess
import sys
import time

tool, model, base, which = sys.argv[1:5]
SIG = {"INT": signal.SIGINT, "TERM": signal.SIGTERM}[which]
fake = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake-ort")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


d = os.path.join(base, "measure-" + which)
os.makedirs(d)
pidfile = os.path.join(base, "fake-" + which + ".pid")
env = dict(os.environ, ONNXP_ORT_SCRIPTS=fake, FAKE_ORT_PIDFILE=pidfile)
p = subprocess.Popen([tool, "calibrate", model, "--dim", "N=2", "--platform", "cpu", "--measure", os.path.join(d, "p.json"),
                      "-o", os.path.join(d, "platform.json")], env=env,
                     preexec_fn=lambda: signal.signal(SIG, signal.SIG_DFL))
deadline = time.time() + 120
while not os.path.exists(pidfile) or not open(pidfile).read():
    if p.poll() is not None:
        fail("the tool ended (%d) before ORT started" % p.returncode)
    if time.time() > deadline:
        p.kill()
        fail("the fake ORT never started")
    time.sleep(0.05)
child = int(open(pidfile).read())
p.send_signal(SIG)
p.wait(timeout=60)
if p.returncode != -SIG:
    fail("exit %d, not death by SIG%s" % (p.returncode, which))
print("%s: died by SIG%s" % (which, which))
try:
    os.kill(child, 0)
    os.kill(child, signal.SIGKILL)
    fail("the ORT child %d is still running" % child)
except ProcessLookupError:
    print("%s: ORT child stopped" % which)
left = sorted(os.listdir(d))
if left:
    fail("left behind in the folder: %s" % left)
print("%s: nothing left behind" % which)
