#!/usr/bin/env python3
"""Plants symlinks at the temporaries' old predictable names (issue 25, item 3).

  planted_symlink.py TOOL MODEL DIR

Before the fix, `-o DIR/out.onnx` wrote DIR/out.onnx.tmp-PID with a plain
std::ofstream, following a symlink planted there: `ln -s victim
out.onnx.tmp-$PID` overwrote the victim. The child's PID is known between
fork and exec, so the links are in place before the tool starts. Checks
that the victim is unchanged, the links are untouched, the output is
written, and that the temporary names are not PID-based (with the commit
delay hook, the temporaries present during the pause are listed) and the
outputs' mode comes from the umask.
"""
import os
import stat
import sys
import time

tool, model, d = sys.argv[1:4]
os.makedirs(d, exist_ok=True)
victim = os.path.join(d, "victim")
with open(victim, "w") as f:
    f.write("precious\n")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(extra_env=None, watch=None):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.read(r, 1)  # wait until the links are planted
        os.umask(0o027)
        env = dict(os.environ, **(extra_env or {}))
        out = os.open(os.devnull, os.O_WRONLY)
        os.dup2(out, 1)
        os.execve(tool, [tool, model, "-o", os.path.join(d, "out.onnx"),
                         "--report", os.path.join(d, "report.json")], env)
    os.close(r)
    links = []
    for name in ("out.onnx", "report.json"):
        link = os.path.join(d, "%s.tmp-%d" % (name, pid))
        os.symlink(victim, link)
        links.append(link)
    os.write(w, b"x")
    os.close(w)
    seen = set()
    if watch:
        deadline = time.time() + 60
        planted = {os.path.basename(link) for link in links}
        while time.time() < deadline and not any(n.startswith("out.onnx.tmp-") and n not in planted for n in seen):
            seen |= set(os.listdir(d))
            time.sleep(0.02)
    _, status = os.waitpid(pid, 0)
    return pid, os.waitstatus_to_exitcode(status), links, seen


pid, code, links, _ = run()
if code != 0:
    fail("exit code %d" % code)
if open(victim).read() != "precious\n":
    fail("the victim behind a planted link was overwritten")
for link in links:
    if not os.path.islink(link):
        fail("the planted link %s was replaced" % link)
    os.unlink(link)
print("victim intact, links untouched")
mode = stat.S_IMODE(os.stat(os.path.join(d, "out.onnx")).st_mode)
if mode != 0o640:
    fail("out.onnx has mode %o, expected 640 from umask 027" % mode)
print("mode 640 from umask 027")

pid, code, links, seen = run({"ONNXP_TEST_COMMIT_DELAY_MS": "300"}, watch=True)
planted = {os.path.basename(link) for link in links}
for link in links:
    os.unlink(link)
tmps = sorted(n for n in seen if ".tmp-" in n and n not in planted)
if not tmps:
    fail("saw no temporary during the commit pause")
if any(n.endswith(".tmp-%d" % pid) for n in tmps):
    fail("a temporary is named after the PID: %s" % tmps)
print("temporaries are not named after the PID")
if code != 0 or open(victim).read() != "precious\n":
    fail("second run: exit %d or victim changed" % code)
