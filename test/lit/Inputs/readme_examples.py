#!/usr/bin/env python3
"""Runs every onnx-partition example of README.md as printed (issue 37).

  readme_examples.py README.md TOOL WORKDIR [--list]

Examples are the `onnx-partition ...` and `onnx-partition-run ...` lines
of the README's code blocks
(backslash continuations joined, a leading "$ " dropped) and the commands
in its tables' first cells. Synopsis lines whose arguments are
placeholders (MODEL, CHAIN, OUT.onnx, P.json, `...`) are not examples.
Each runs from WORKDIR/repo, whose entries link to the repository's and
whose ../shared is the shared folder (ONNXP_SHARED); one that reads
../shared is skipped when that folder is absent, and a runner example
when the runner's ONNX Runtime is not installed (`onnx-partition-run` is
then tools/ort-runner/run_pipeline.js, as `npm install -g` links it). Prints one line per
example (PASS/SKIP/FAIL with its exit code) and exits 1 if any failed.
"""
import os
import re
import shlex
import subprocess
import sys

PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*(\.[a-z]+)?$|^\.\.\.$|^\[")


def examples(text):
    out = []
    in_block = False
    pending = ""
    for line in text.splitlines():
        if line.startswith("```"):
            in_block = not in_block
            pending = ""
            continue
        if in_block:
            line = line.rstrip()
            if line.startswith("$ "):
                line = line[2:]
            if pending:
                line = pending + " " + line.strip()
                pending = ""
            if line.endswith("\\"):
                pending = line[:-1].rstrip()
                continue
            cmd = line.split("#")[0].strip() if " #" in line else line.strip()
            if cmd.split(" ")[0] in ("onnx-partition", "onnx-partition-run"):
                out.append(cmd)
        else:
            for cell in re.findall(r"^\| `(onnx-partition [^`]*)` \|", line):
                out.append(cell.replace("\\|", "|"))
    return [c for c in out if not any(PLACEHOLDER.match(a) for a in shlex.split(c)[1:])]


def main():
    readme, tool, work = sys.argv[1], sys.argv[2], sys.argv[3]
    cmds = examples(open(readme).read())
    if "--list" in sys.argv:
        print("\n".join(cmds))
        return 0
    src = os.path.dirname(os.path.abspath(readme))
    shared = os.environ.get("ONNXP_SHARED", os.path.join(src, "..", "shared"))
    repo = os.path.join(work, "repo")
    os.makedirs(repo, exist_ok=True)
    for name in ("examples", "test", "tools", "docs"):
        link = os.path.join(repo, name)
        if not os.path.lexists(link):
            os.symlink(os.path.join(src, name), link)
    if os.path.isdir(shared) and not os.path.lexists(os.path.join(work, "shared")):
        os.symlink(os.path.abspath(shared), os.path.join(work, "shared"))
    have_shared = os.path.isdir(os.path.join(work, "shared", "models"))
    # onnx-partition-run as `npm install -g ./tools/ort-runner` installs it.
    runner = os.path.join(src, "tools", "ort-runner")
    have_runner = os.path.isdir(os.path.join(runner, "node_modules", "onnxruntime-node"))
    bin_dir = os.path.join(work, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    shim = os.path.join(bin_dir, "onnx-partition-run")
    with open(shim, "w") as f:
        f.write('#!/bin/sh\nexec node "%s" "$@"\n' % os.path.join(runner, "run_pipeline.js"))
    os.chmod(shim, 0o755)
    env = dict(os.environ, PATH=os.pathsep.join([os.path.dirname(tool), bin_dir, os.environ.get("PATH", "")]))
    failed = 0
    for cmd in cmds:
        if "../shared" in cmd and not have_shared:
            print("SKIP (no ../shared): " + cmd)
            continue
        if cmd.startswith("onnx-partition-run") and not have_runner:
            print("SKIP (runner not installed: bash tools/setup.sh deps): " + cmd)
            continue
        r = subprocess.run(shlex.split(cmd), cwd=repo, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode == 0:
            print("PASS: " + cmd)
        else:
            failed += 1
            last = r.stdout.strip().splitlines()[-1:] or [""]
            print("FAIL (exit %d): %s: %s" % (r.returncode, cmd, last[0]))
    print("%d examples, %d failed" % (len(cmds), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
