"""One front door (issue 32, item 1): the same request through the tool and
through the Python module makes the same plan, byte for byte in --report.

Each row is a request as partition() keywords; the tool gets the same
request as command-line options, spelled here independently of the module
(key -> --key-with-dashes). Reports carry no timings (no --timings), so two
runs of one request write the same bytes. Also: the Python module checks
its keywords with the tool's caps and messages (issue 39, item 7).

Run by ctest (python-module) with PYTHONPATH at build/python and ONNXP_TOOL
at the built tool."""
import os
import signal
import subprocess
import sys

import pytest

import onnx_partition as op

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INPUTS = os.path.join(SRC, "test", "lit", "Inputs")
SHARED = os.environ.get("ONNXP_SHARED_DIR", os.path.join(SRC, "..", "shared"))
TOOL = os.environ.get("ONNXP_TOOL")

MLP = os.path.join(INPUTS, "models", "mlp.onnxtxt")
CNN = os.path.join(INPUTS, "models", "cnn_skip.onnxtxt")
TRANSFORMER = os.path.join(INPUTS, "models", "transformer_block.onnxtxt")
EXAMPLE = os.path.join(SRC, "examples", "mlp_skip.onnxtxt")
COST_CNN = os.path.join(INPUTS, "cost", "cnn.onnxtxt")
CNN_TABLE = os.path.join(INPUTS, "cost", "cnn-table.csv")
CNN_PROFILE = os.path.join(SRC, "test", "unit", "Inputs", "cost", "cnn-n1.profile.json")
THREE_BLOCKS = os.path.join(INPUTS, "chains", "three-blocks.json")
DIAMOND = os.path.join(INPUTS, "dp", "diamond.json")
TRAIN = os.path.join(INPUTS, "dp", "train.json")
PATH4 = os.path.join(INPUTS, "baselines", "path4.json")
MLP_PLAN = os.path.join(INPUTS, "plans", "mlp-2-contig.json")
PIPEDREAM = os.path.join(SHARED, "workloads", "pipedream", "alexnet.txt")
SHARED_MLP = os.path.join(SHARED, "models", "ort_mlp_training.onnx")

# (id, model, keywords): every option family -- input, platform, cost model,
# algorithm and its options, pipeline, outputs (schedule, plan loading).
REQUESTS = [
    ("mlp-single", MLP, {}),
    ("mlp-dp-2", MLP, {"devices": 2, "algo": "dp"}),
    ("mlp-probe", MLP, {"training": True, "devices": 2, "algo": "dp", "schedule": "1f1b", "microbatches": 8,
                        "memory": "28KiB"}),
    ("mlp-gpipe-4", MLP, {"training": True, "devices": 2, "algo": "dp", "schedule": "gpipe",
                          "microbatches": 4}),
    ("mlp-objective", MLP, {"training": True, "devices": 2, "algo": "dp", "objective": "gpipe"}),
    ("mlp-sum", MLP, {"training": True, "devices": 2, "algo": "dp", "memory_model": "sum"}),
    ("mlp-sgd", MLP, {"training": True, "devices": 2, "algo": "dp", "optimizer": "sgd"}),
    ("mlp-split", MLP, {"training": True, "devices": 2, "algo": "dp", "split_stateless_backward": True}),
    ("mlp-placeholder", MLP, {"devices": 2, "algo": "dp", "cost_model": "placeholder"}),
    ("mlp-ort-none", MLP, {"devices": 2, "algo": "greedy", "ort_optimizations": "none"}),
    ("mlp-a100-overlap", MLP, {"platform": "a100", "devices": 3, "algo": "dp", "overlap_comm": True}),
    ("mlp-nodes", MLP, {"platform": "a100", "devices": 4, "nodes": 2, "algo": "dp"}),
    ("mlp-cpus", MLP, {"devices": 1, "cpus": 1, "algo": "dp"}),
    ("mlp-load-plan", MLP, {"devices": 2, "load_plan": MLP_PLAN}),
    ("mlp-granularity", MLP, {"training": True, "devices": 2, "algo": "dp", "granularity": "layer"}),
    ("mlp-passes", MLP, {"devices": 2, "algo": "dp",
                         "passes": "infer-shapes,build-cost-graph,classify-training,estimate-costs,partition"}),
    ("mlp-chain-recipe", MLP, {"training": True, "devices": 2, "algo": "pipeline-pipedream",
                               "chain_recipe": "separators"}),
    ("mlp-pipedream", MLP, {"training": True, "devices": 2, "algo": "pipeline-pipedream"}),
    ("example-dims", EXAMPLE, {"devices": 2, "algo": "dp", "dim": {"N": 8}}),
    ("example-pardnn", EXAMPLE, {"devices": 2, "algo": "pardnn", "dim": {"N": 8}, "memory_heuristic": "balance",
                                 "memory_headroom": 0.2}),
    ("cnn-dpl", CNN, {"devices": 3, "algo": "dpl"}),
    ("cnn-local-search", CNN, {"devices": 2, "algo": "local-search", "seed": 3, "restarts": 2}),
    ("transformer-dp", TRANSFORMER, {"training": True, "devices": 2, "algo": "dp"}),
    ("cost-table", COST_CNN, {"dim": {"N": 1}, "devices": 2, "algo": "dp", "cost_table": CNN_TABLE}),
    ("profile", COST_CNN, {"dim": {"N": 1}, "training": True, "devices": 2, "algo": "dp",
                           "profile": CNN_PROFILE}),
    ("chain-pipeline-ilp", THREE_BLOCKS, {"algo": "pipeline-ilp", "devices": 2, "memory": "1GB"}),
    ("chain-gpipe", THREE_BLOCKS, {"algo": "pipeline-pipedream", "devices": 2, "schedule": "gpipe",
                                   "microbatches": 2}),
    ("chain-rotor", THREE_BLOCKS, {"algo": "rotor", "memory": "1GB"}),
    ("chain-offload", THREE_BLOCKS, {"algo": "offload-weights", "offload_bound": 1, "memory": "10GB"}),
    ("workload-dp", DIAMOND, {"algo": "dp", "ideal_limit": 1000}),
    ("workload-replicate", TRAIN, {"algo": "dp", "replicate": True, "devices": 3}),
    ("workload-global-batch", TRAIN, {"devices": 2, "global_batch": 8, "micro_batch": 2}),
    ("workload-ip", PATH4, {"algo": "ip-contig", "gap": 0, "threads": 1}),
    ("workload-latency", PATH4, {"algo": "latency-ip", "gap": 0, "subgraphs_per_device": 2}),
    ("workload-all", DIAMOND, {"algo": "all", "time_limit": 60}),
    ("pipedream-layers", PIPEDREAM, {"algo": "pipeline-pipedream", "devices": 4, "chain_recipe": "layers"}),
    ("shared-mlp-training", SHARED_MLP, {"devices": 2, "cpus": 1, "platform": "a100", "algo": "dp",
                                         "dim": ["input-0_dim0=8", "input-0_dim1=784", "output-0_dim0=8"]}),
]


def cli_args(keywords):
    """The keywords as the tool's options, spelled by hand (not by the module)."""
    args = []
    for key, value in keywords.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif isinstance(value, dict):
            for k, v in value.items():
                args += [flag, "%s=%s" % (k, v)]
        elif isinstance(value, list):
            for v in value:
                args += [flag, str(v)]
        else:
            args += [flag, str(value)]
    return args


def tool_report(tmp_path, model, keywords, *extra):
    report = tmp_path / "cli.json"
    run = subprocess.run([TOOL, model, *cli_args(keywords), *extra, "--report", str(report)], capture_output=True,
                         text=True, env=dict(os.environ, ONNX_PARTITION_QUIET="1"))
    assert run.returncode == 0, run.stderr
    return report.read_bytes()


def placement(report):
    """Each node's device (the stages are named only when the model was cut)."""
    return [(a["node"], a["device"]) for a in report["assignment"]]


def is_onnx(model):
    return model.endswith((".onnx", ".onnxtxt"))


@pytest.mark.parametrize("name,model,keywords", REQUESTS, ids=[r[0] for r in REQUESTS])
def test_the_tool_and_the_module_write_the_same_report(tmp_path, name, model, keywords):
    if not os.path.exists(model):
        pytest.skip("%s absent (../shared not mounted)" % model)
    expected = tool_report(tmp_path, model, keywords)
    # In memory, asking for what the tool makes without -o: the report alone.
    r = op.partition(model, annotate=False, stages=False, **keywords)
    assert r.report_json.encode() == expected
    # Written as the tool writes it.
    written = tmp_path / "py.json"
    op.partition(model, annotate=False, stages=False, report=str(written), **keywords)
    assert written.read_bytes() == expected
    if is_onnx(model):
        # With the annotated model and the stages written (their notes join
        # the report): -o and --emit-stages against output= and emit_stages=,
        # the same paths.
        out, stages = str(tmp_path / "out.onnx"), str(tmp_path / "stages")
        expected = tool_report(tmp_path, model, keywords, "-o", out, "--emit-stages", stages)
        cli_model = open(out, "rb").read()
        op.partition(model, report=str(written), output=out, emit_stages=stages, **keywords)
        assert written.read_bytes() == expected
        assert open(out, "rb").read() == cli_model
        # The module's default (model and stages in memory) plans the same.
        import json
        default = op.partition(model, **keywords)
        assert placement(default.report) == placement(json.loads(expected))


def test_the_table_covers_every_option_family():
    assert len(REQUESTS) >= 30
    used = {k for _, _, kw in REQUESTS for k in kw}
    for family in (["dim", "training", "chain_recipe"], ["devices", "cpus", "nodes", "memory", "platform",
                   "overlap_comm"], ["cost_model", "cost_table", "profile", "ort_optimizations",
                   "split_stateless_backward", "optimizer", "memory_model"], ["algo", "objective", "time_limit",
                   "replicate", "ideal_limit", "gap", "threads", "seed", "restarts", "subgraphs_per_device",
                   "memory_headroom", "memory_heuristic", "load_plan", "global_batch", "micro_batch"],
                   ["passes", "granularity"],
                   ["schedule", "microbatches"]):
        for option in family:
            assert option in used, option
            assert option in op.option_names(), option


def test_the_mlp_probe_gives_one_plan_through_both_doors(tmp_path):
    # Issue 32's probe: the schedule reached the planner only through the
    # tool (max-load 0.0450 there, 0.0400 through Python, a plan the tool
    # itself refused).
    keywords = {"training": True, "devices": 2, "algo": "dp", "schedule": "1f1b", "microbatches": 8,
                "memory": "28KiB"}
    r = op.partition(MLP, **keywords)
    import json
    cli = json.loads(tool_report(tmp_path, MLP, keywords))
    assert placement(r.report) == placement(cli)
    assert r.report["objective"] == cli["objective"]
    # The plan the module returns is one the tool accepts back.
    plan = tmp_path / "plan.json"
    plan.write_text(r.report_json)
    back = subprocess.run([TOOL, MLP, *cli_args(keywords), "--load-plan", str(plan)], capture_output=True,
                          text=True, env=dict(os.environ, ONNX_PARTITION_QUIET="1"))
    assert back.returncode == 0, back.stderr


def tool_error(*args):
    run = subprocess.run([TOOL, *args], capture_output=True, text=True)
    assert run.returncode != 0
    assert run.stderr.startswith("error: ")
    return run.returncode, run.stderr[len("error: "):].rstrip("\n")


@pytest.mark.parametrize("value,text", [(float("nan"), "nan"), (float("inf"), "inf"), (1e300, "1e300"),
                                        (-1, "-1"), (0, "0")])
def test_time_limit_out_of_range_is_the_tools_usage_error(value, text):
    with pytest.raises(op.PartitionError) as e:
        op.partition(MLP, devices=2, time_limit=value)
    code, message = tool_error(MLP, "--devices", "2", "--time-limit", text)
    assert e.value.exit_code == code == 2
    assert str(e.value) == message


@pytest.mark.parametrize("keywords,args", [
    ({"devices": 2 ** 31 - 1}, ["--devices", str(2 ** 31 - 1)]),
    ({"devices": 100000}, ["--devices", "100000"]),
    ({"microbatches": 1e9, "schedule": "1f1b"}, ["--microbatches", "1000000000", "--schedule", "1f1b"]),
    ({"nodes": 5000}, ["--nodes", "5000"]),
    # Issue 39 item 3: 4096 nodes of 8 GPUs, each count in range, the total not.
    ({"platform": "dgx-a100", "nodes": 4096}, ["--platform", "dgx-a100", "--nodes", "4096"]),
    ({"cpus": -2}, ["--cpus", "-2"]),
    ({"dim": {"N": 0}}, ["--dim", "N=0"]),
    ({"dim": {"N": -3}}, ["--dim", "N=-3"]),
])
def test_sizes_are_capped_as_the_tool_caps_them(keywords, args):
    with pytest.raises(op.PartitionError) as e:
        op.partition(EXAMPLE, **keywords)
    code, message = tool_error(EXAMPLE, *args)
    assert e.value.exit_code == code == 2
    assert str(e.value) == message


def test_a_platform_file_too_large_in_all_is_refused_at_once(tmp_path):
    # Each field in range, 16.7 million accelerators in all: was 73 s and a
    # bare bad_alloc; now the caps, in one message, before any allocation.
    p = tmp_path / "p.json"
    p.write_text('{"base": "dgx-a100", "nodes": 4096, "acceleratorsPerNode": 4096}')
    with pytest.raises(op.PartitionError) as e:
        op.partition(EXAMPLE, platform=str(p))
    code, message = tool_error(EXAMPLE, "--platform", str(p))
    assert e.value.exit_code == code == 2
    assert str(e.value) == message
    assert "at most 4096 accelerators in all" in message


def test_unknown_keywords_and_wrong_types_are_errors():
    with pytest.raises(TypeError, match="no_such_option"):
        op.partition(MLP, no_such_option=1)
    with pytest.raises(TypeError, match="flag"):
        op.partition(MLP, training="yes")
    with pytest.raises(TypeError):
        op.partition(MLP, devices=True)


def test_every_tool_option_is_a_keyword():
    help_text = subprocess.run([TOOL, "--help"], capture_output=True, text=True).stdout
    import re
    longs = set(re.findall(r"(?:^|[ ,])--([a-z][a-z0-9-]*)", help_text)) - {"help", "version"}
    missing = {o for o in longs if o.replace("-", "_") not in op.option_names()}
    assert not missing
    assert len(longs) >= 40


def test_main_without_arguments_is_a_usage_error(capfd):
    assert op.main([]) == 2
    from onnx_partition import _onnx_partition
    assert _onnx_partition.main([]) == 2
    err = capfd.readouterr().err
    assert "vector" not in err
    assert err.startswith("error: ") and "MODEL" in err


def test_main_leaves_the_interpreters_signal_handlers(tmp_path):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    report = tmp_path / "r.json"
    assert op.main([MLP, "--devices", "2", "--algo", "dp", "--report", str(report), "-q"]) == 0
    op.partition(MLP, devices=2, algo="dp", report=str(tmp_path / "p.json"))
    assert {s: signal.getsignal(s) for s in before} == before
    # And Ctrl-C in an interpreter that ran the tool is still Python's
    # KeyboardInterrupt, not the end of the process.
    script = ("import os, signal, onnx_partition as op\n"
              "op.main([%r, '--devices', '2', '--report', %r, '-q'])\n"
              "try:\n    os.kill(os.getpid(), signal.SIGINT)\n    import time; time.sleep(5)\n"
              "except KeyboardInterrupt:\n    print('interrupted')\n") % (MLP, str(tmp_path / "s.json"))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("interrupted")
