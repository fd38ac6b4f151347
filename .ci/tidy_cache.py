#!/usr/bin/env python3
"""Runs clang-tidy over a compilation database, skipping translation units
whose clang-tidy run already came out clean with the same inputs.

Called by .ci/tidy. Every clang-tidy run parses its translation unit from
scratch (about 3 CPU s each here, 211 units: over 5 minutes of a CI run on
2 cores), and nothing in a fresh clone can be reused the way ccache reuses
objects. This is ccache's idea applied to the check: the key of a unit is

  - clang-tidy's version, the .clang-tidy file and the command-line checks;
  - the unit's command line with the source folder and the build folder
    written as placeholders and its output file dropped;
  - the unit as clang's preprocessor sees it (clang++-14 -E -P, the same
    flags), every header the unit includes being part of that text, with
    the two folders written as placeholders (__FILE__ expands to a path).

Only clean results are stored (an empty file named after the key), so a
unit with a finding runs, and fails, every time. ONNXP_TIDY_CACHE names the
folder (default ~/.cache/onnxp-tidy); ONNXP_TIDY_CACHE=off runs every unit.

  tidy_cache.py DB ROOT FILE_REGEX JOBS CLANG_TIDY_ARGS...
"""
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys


def normalised(text, root, build):
    return text.replace(build, "<build>").replace(root, "<root>")


def preprocess_command(args, source):
    """The unit's compiler arguments, run through clang's preprocessor."""
    out = ["clang++-14", "-E", "-P", "-Wno-unknown-warning-option"]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a in ("-c", source):
            continue
        out.append(a)
    return out + [source]


def unit_key(entry, root, build, common):
    args = shlex.split(entry["command"])
    source = entry["file"]
    pre = subprocess.run(preprocess_command(args, source), cwd=entry["directory"],
                         capture_output=True)
    if pre.returncode != 0:
        return None  # let clang-tidy report what is wrong
    h = hashlib.sha256(common)
    cmd = [a for a in args[1:] if a != "-c"]
    if "-o" in cmd:
        i = cmd.index("-o")
        del cmd[i:i + 2]
    h.update(normalised(" ".join(cmd), root, build).encode())
    h.update(b"\0")
    h.update(normalised(pre.stdout.decode("utf-8", "surrogateescape"), root, build)
             .encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def main():
    db_path, root, pattern, jobs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    tidy_args = sys.argv[5:]
    db_dir = os.path.dirname(db_path)
    entries = [e for e in json.load(open(db_path)) if re.search(pattern, e["file"])]
    build = os.path.commonpath([e["directory"] for e in entries]) if entries else root
    cache = os.environ.get("ONNXP_TIDY_CACHE", os.path.expanduser("~/.cache/onnxp-tidy"))
    use_cache = cache != "off"
    if use_cache:
        os.makedirs(cache, exist_ok=True)
    version = subprocess.run(["clang-tidy-14", "--version"], capture_output=True).stdout
    config = open(os.path.join(root, ".clang-tidy"), "rb").read()
    common = version + b"\0" + config + b"\0" + " ".join(tidy_args).encode() + b"\0"

    def run(entry):
        key = unit_key(entry, root, build, common) if use_cache else None
        if key and os.path.exists(os.path.join(cache, key)):
            return entry["file"], 0, "", True
        p = subprocess.run(["clang-tidy-14", "-p", db_dir, "-quiet"] + tidy_args + [entry["file"]],
                           capture_output=True, text=True)
        text = p.stdout + p.stderr
        if key and p.returncode == 0 and not re.search(r"(warning|error):", text):
            open(os.path.join(cache, key), "w").close()
        return entry["file"], p.returncode, text, False

    status, reused = 0, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for source, code, text, hit in pool.map(run, entries):
            reused += hit
            if code != 0 or re.search(r"(warning|error):", text):
                status = 1
                sys.stdout.write(text)
    print(f"tidy-cache: {reused} of {len(entries)} units clean with the same inputs before"
          + ("" if use_cache else " (cache off)"), file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
