"""Tests of the onnx_partition Python module (issue 26 item 3), run by ctest
(python-module) with PYTHONPATH pointing at build/python.

Every value is checked against the tool on the same input: the module must
give what `onnx-partition` gives, without files."""
import json
import os
import subprocess
import sys

import onnx
import pytest

import onnx_partition as op

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(SRC, "examples", "mlp_skip.onnxtxt")
SHARED = os.environ.get("ONNXP_SHARED_DIR", os.path.join(SRC, "..", "shared"))
RESNET = os.path.join(SHARED, "models", "onnx_light_resnet50.onnx")
TOOL = os.environ.get("ONNXP_TOOL")


def tool_report(tmp_path, *args):
    """The tool's --report for args, as a dict."""
    report = tmp_path / "report.json"
    subprocess.run([TOOL, *args, "--report", str(report)], check=True, stdout=subprocess.DEVNULL)
    return json.loads(report.read_text())


def tool_model(tmp_path):
    """The example as a binary ONNX file (onnx.load reads no ONNX text)."""
    out = tmp_path / "mlp_skip.onnx"
    import onnx.parser
    text = "\n".join(l for l in open(EXAMPLE).read().splitlines() if not l.lstrip().startswith("#"))
    onnx.save(onnx.parser.parse_model(text), str(out))
    return str(out)


def test_path_bytes_and_modelproto_give_the_tools_plan(tmp_path):
    r = op.partition(EXAMPLE, devices=2, algo="dp", dims={"N": 8})
    expected = tool_report(tmp_path, EXAMPLE, "--devices", "2", "--algo", "dp", "--dim", "N=8")
    for key in ("algorithm", "objective", "objective_kind", "lower_bound", "devices", "assignment"):
        assert r.report[key] == expected[key], key
    # The annotated model and every stage pass ONNX's checker.
    onnx.checker.check_model(r.model)
    assert len(r.stages) == len(r.pipeline["stages"]) >= 2
    assert r.stage_files == [s["file"] for s in r.pipeline["stages"]]
    for s in r.stages:
        onnx.checker.check_model(s)
    # The same model as bytes and as a ModelProto: the same plan.
    text = open(EXAMPLE, "rb").read()
    from_bytes = op.partition(text, devices=2, algo="dp", dims={"N": 8})
    assert from_bytes.report["assignment"] == expected["assignment"]
    proto = onnx.load(tool_model(tmp_path))
    from_proto = op.partition(proto, devices=2, algo="dp", dims={"N": 8})
    assert from_proto.report["objective"] == expected["objective"]
    assert r.summary().startswith("onnx-partition: " + EXAMPLE + ": ")
    assert "algorithm dp: max-load" in r.summary()


def test_errors_raise_one_exception_type_with_the_tools_exit_code():
    with pytest.raises(op.PartitionError) as e:
        op.partition(EXAMPLE, devices=2, algo="no-such-algorithm", dims={"N": 8})
    assert e.value.exit_code == 2
    assert "no-such-algorithm" in str(e.value)
    with pytest.raises(op.PartitionError) as e:
        op.partition(b"not a model", devices=2)
    assert e.value.exit_code == 1
    with pytest.raises(TypeError):
        op.partition(42)


def test_one_session_assignment_and_pictures():
    # One accelerator and one CPU fit one ONNX Runtime session: the settings
    # name both; two accelerators need one session per stage.
    one = op.partition(EXAMPLE, devices=1, cpus=1, algo="dp", dims={"N": 8}, dot=True, trace=True)
    assert one.ort_layer_assignment is not None
    two = op.partition(EXAMPLE, devices=2, algo="dp", dims={"N": 8})
    assert two.ort_layer_assignment is None
    assert one.dot.startswith("digraph")
    assert "traceEvents" in json.loads(one.trace)
    assert two.dot is None and two.trace is None


def test_python_m_behaves_like_the_binary(tmp_path):
    args = [EXAMPLE, "--devices", "2", "--algo", "dp", "--dim", "N=8"]
    mod = subprocess.run([sys.executable, "-m", "onnx_partition", *args], capture_output=True, text=True)
    exe = subprocess.run([TOOL, *args], capture_output=True, text=True)
    assert mod.returncode == exe.returncode == 0
    strip = lambda s: [l for l in s.splitlines() if "solved in" not in l]
    assert strip(mod.stdout) == strip(exe.stdout)
    # Errors: the same one line and exit code (2 usage, 1 bad input).
    for bad_args in (["--dim", "N=8", "--algo", "nope"], []):
        bad = subprocess.run([sys.executable, "-m", "onnx_partition", EXAMPLE, *bad_args], capture_output=True,
                             text=True)
        ref = subprocess.run([TOOL, EXAMPLE, *bad_args], capture_output=True, text=True)
        assert bad.returncode == ref.returncode != 0
        assert bad.stderr == ref.stderr and bad.stderr.startswith("error:")


@pytest.mark.skipif(not os.path.exists(RESNET), reason="../shared/models absent")
def test_acceptance_resnet50_four_devices():
    # The stages of a pipeline (max-load); auto's default on 4 accelerators
    # replicates the whole model at an implied global batch (issue 33).
    r = op.partition(onnx.load(RESNET), devices=4, objective="max-load")
    onnx.checker.check_model(r.model)
    assert len(r.report["devices"]) >= 4
    assert len(r.stages) >= 2
    default = op.partition(onnx.load(RESNET), devices=4)
    assert default.report["objective_kind"] == "throughput"
    assert default.report["global_batch"]["microbatches"] == 16
