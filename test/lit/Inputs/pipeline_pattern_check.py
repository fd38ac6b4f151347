#!/usr/bin/env python3
"""Reads back the 1F1B pattern written into an annotated model (the
`onnx-partition print` listing, argv[1]) and checks it against the plan's
schedule in the --report JSON (argv[2]): every node tagged "1F1B Xl" must
carry task Xl's start and index shift from the report, its order among the
tasks of its GPU in the period, and the model's period must be the
report's. Prints one line per task seen and a verdict for FileCheck."""
import json
import re
import sys

listing = open(sys.argv[1]).read()
sched = json.load(open(sys.argv[2]))["schedule"]
gpu, start, delay = sched["gpu_of_block"], sched["task_start_ms"], sched["task_delay"]
L = len(gpu)

def task_index(name):
    l = int(name[1:])
    return l - 1 if name[0] == "F" else 2 * L - l

def gpu_of(k):
    return gpu[k if k < L else 2 * L - 1 - k]

errors = []
m = re.search(r"^# 1F1B period (\S+) ms$", listing, re.M)
if not m or abs(float(m.group(1)) - sched["period_ms"]) > 1e-9 * sched["period_ms"]:
    errors.append("period differs: %s vs %s" % (m and m.group(1), sched["period_ms"]))
seen = {}
for m in re.finditer(r"# (\S+) stage (\d+).*, 1F1B ([FB]\d+) start (\S+) ms shift (\d+) order (\d+)$", listing, re.M):
    dev, stage, task, s, h, o = m.groups()
    k = task_index(task)
    order = sum(1 for j in range(2 * L) if j != k and gpu_of(j) == gpu_of(k)
                and (start[j] < start[k] or (start[j] == start[k] and j < k)))
    if abs(float(s) - start[k]) > 1e-6 * max(1.0, sched["period_ms"]):
        errors.append("%s start %s vs %s" % (task, s, start[k]))
    if int(h) != delay[k]:
        errors.append("%s shift %s vs %s" % (task, h, delay[k]))
    if int(o) != order:
        errors.append("%s order %s vs %s" % (task, o, order))
    seen.setdefault(task, set()).add(dev)
for task in sorted(seen, key=task_index):
    print("task %s on %s" % (task, ",".join(sorted(seen[task]))))
print("\n".join(errors) if errors else "pattern agrees with the report: %d tasks" % len(seen))
sys.exit(1 if errors else 0)
