# -*- Python -*-  lit configuration for the onnx-partition golden tests.
import os
import shutil
import sys

import lit.formats

config.name = "onnx-partition"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".onnxtxt", ".test"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.onnxp_binary_dir, "test", "lit")

tool = os.path.join(config.onnxp_binary_dir, "tools", "onnx-partition")
config.substitutions.append(("%onnxp", tool))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%shared", config.shared_dir))
config.substitutions.append(("%srcroot", config.onnxp_source_dir))
# The Python running lit (CMake's Python3_EXECUTABLE, which has the onnx
# module the set-up installs), for input generators that need it.
config.substitutions.append(("%python", sys.executable))
# Tool names are substituted only as whole words, never inside paths or
# file names such as "not-onnx.bin".
for name in ["FileCheck", "not", "count", "split-file"]:
    config.substitutions.append(
        (r"(?<![-\w/.])%s(?![-\w.])" % name, os.path.join(config.llvm_tools_dir, name)))

# Tests that read ../shared declare `REQUIRES: shared`; they are reported as
# UNSUPPORTED (skipped) when the folder is absent.
if os.path.isdir(os.path.join(config.shared_dir, "models")):
    config.available_features.add("shared")
# Tests that run ONNX Runtime declare `REQUIRES: ort` (onnxruntime-node in
# test/ort and beside the runner, tools/ort-runner: tools/setup.sh installs
# both); tests that run training stages also `ort-training` (the runner's
# onnxruntime-web 1.19.2 training build).
# ONNXP_NO_ORT=1 (the sanitizer build of .ci/run) leaves them out.
def _npm(folder, package):
    return os.path.isdir(os.path.join(config.onnxp_source_dir, folder, "node_modules", package))
if not os.environ.get("ONNXP_NO_ORT") and shutil.which("node") and _npm(
        os.path.join("test", "ort"), "onnxruntime-node") and _npm(os.path.join("tools", "ort-runner"), "onnxruntime-node"):
    config.available_features.add("ort")
    if _npm(os.path.join("tools", "ort-runner"), "onnxruntime-web"):
        config.available_features.add("ort-training")
# Tests that run a stand-in for ONNX Runtime's scripts need Node.js only.
if shutil.which("node"):
    config.available_features.add("node")
# Tests that render --dot pictures with Graphviz declare `REQUIRES: graphviz`.
if shutil.which("dot"):
    config.available_features.add("graphviz")
if shutil.which("protoc"):
    config.available_features.add("protoc")
config.environment["ONNXP_SHARED"] = config.shared_dir
# No progress lines (issue 20): a run slowed by a sanitizer past 2 s would
# otherwise add lines to what a test checks. Tests of the lines unset it.
config.environment["ONNX_PARTITION_QUIET"] = "1"
# Tests that take seconds here but many minutes under ASan/UBSan (issue 21's
# Llama-2 runs: about 10 s each in Release, 9.5 min together in the sanitizer
# build) declare `UNSUPPORTED: sanitized`; the Release suite runs them.
_cache = os.path.join(config.onnxp_binary_dir, "CMakeCache.txt")
if os.path.isfile(_cache) and "ONNXP_SANITIZE:BOOL=ON" in open(_cache).read():
    config.available_features.add("sanitized")
    # The --time-limit tests' wall bounds (Inputs/wall_within.py) allow 3x
    # here: the part of a run that always completes (offload-weights' first
    # candidate: 0.7 s in Release) took 6.57 s of a 6 s bound under ASan.
    config.environment["WALL_WITHIN_SCALE"] = "3"
