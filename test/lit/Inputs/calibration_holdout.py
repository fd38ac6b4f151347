"""Writes a chain of 48 Relus on [1, 1024] floats (MODEL.onnxtxt) and an
ONNX Runtime profile of it (PROFILE.json) for calibrate's held-out verdict
(issue 37, item 7). calibrate holds out every 4th profiled node (graph
order) and fits the others:
  refuse: the fitted kernels take 400 us, the held-out ones 4 us (near the
          analytical price of a 4 KiB Relu, ~3.6 us on the cpu preset): the
          fit prices the held-out kernels ~100x off, the platform ~10%;
  accept: every kernel takes 40 us, so the fit prices them all well.
Usage: calibration_holdout.py MODEL.onnxtxt PROFILE.json refuse|accept
"""
import json
import sys

N = 48
model_path, profile_path, mode = sys.argv[1:4]
lines = ["<", "  ir_version: 8,", '  opset_import: ["" : 17]', ">",
         "chain (float[1,1024] x) => (float[1,1024] y) {"]
prev = "x"
for i in range(N):
    out = "y" if i == N - 1 else f"r{i}"
    lines.append(f"  {out} = Relu ({prev})")
    prev = out
lines.append("}")
with open(model_path, "w") as f:
    f.write("\n".join(lines) + "\n")

events = []
for i in range(N):
    held_out = i % 4 == 3
    dur = 40 if mode == "accept" else (4 if held_out else 400)
    events.append({"cat": "Node", "pid": 1, "tid": 1, "dur": dur, "ts": i * 500, "ph": "X",
                   "name": f"Relu_{i}_kernel_time",
                   "args": {"op_name": "Relu", "provider": "CPUExecutionProvider"}})
with open(profile_path, "w") as f:
    json.dump(events, f, indent=0)
