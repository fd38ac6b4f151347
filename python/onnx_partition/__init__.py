"""onnx_partition: the onnx-partition compiler as a Python module.

    import onnx, onnx_partition as op
    r = op.partition(onnx.load("model.onnx"), devices=4, algo="auto",
                     memory="16GiB", platform="a100", dims={"batch_size": 8})
    onnx.save(r.model, "model.partitioned.onnx")   # annotated with the plan
    for name, stage in zip(r.stage_files, r.stages): onnx.save(stage, name)
    print(r.summary())

The model is an onnx.ModelProto, the bytes of one, or a path; it is handed
to the C++ library in memory (no temporary file). Errors raise
PartitionError with the tool's message and exit code (1 bad input,
2 usage). `python3 -m onnx_partition ARGS` runs the command-line tool.
"""
import json
import os

from onnx_partition import _onnx_partition as _core

__all__ = ["partition", "PartitionError", "PartitionResult"]


class PartitionError(Exception):
    """A run that failed: str(e) is the tool's message (what follows
    "error: "), e.exit_code its exit code (1 bad input, 2 usage)."""

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class PartitionResult:
    """What one partition() call made.

    model                 onnx.ModelProto annotated with the plan (what -o writes)
    stages                list of onnx.ModelProto, one per stage (--emit-stages)
    stage_files           their file names as pipeline.json names them
    pipeline              pipeline.json as a dict (stages and the tensors between them)
    report                the --report document as a dict
    ort_layer_assignment  session.layer_assignment_settings that runs `model` in
                          one ONNX Runtime session, or None when the plan needs
                          one session per stage (run the stages instead)
    dot, trace            the --dot picture and --trace JSON, when asked for
    summary()             the text the tool prints
    """

    def __init__(self, raw):
        import onnx  # only needed once there is a result

        self._summary = raw["summary"]
        self.model = onnx.ModelProto.FromString(raw["model"]) if raw["model"] is not None else None
        self.stage_files = [name for name, _ in raw["stages"]]
        self.stages = [onnx.ModelProto.FromString(b) for _, b in raw["stages"]]
        self.pipeline = json.loads(raw["pipeline"]) if raw["pipeline"] else None
        self.report = json.loads(raw["report"])
        self.ort_layer_assignment = raw["ort_layer_assignment"] or None
        self.dot = raw["dot"] or None
        self.trace = raw["trace"] or None

    def summary(self):
        return self._summary

    def __repr__(self):
        return "<PartitionResult %s, %d stages>" % (self.report.get("algorithm", "?"), len(self.stages))


def _model_input(model):
    """(bytes, path, name) for a ModelProto, bytes or a path."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), "", "<bytes>"
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        return b"", path, path
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString(), "", "<ModelProto>"
    raise TypeError("model must be an onnx.ModelProto, bytes or a path, not %s" % type(model).__name__)


def partition(model, devices=-1, algo="auto", memory="", platform="default", dims=None, time_limit=None,
              training=False, cpus=-1, stages=True, dot=False, trace=False, schedule="", microbatches=8):
    """Partitions `model` across `devices` accelerators, as
    `onnx-partition MODEL --devices N --algo ALGO ...` does, and returns a
    PartitionResult. Arguments mirror the tool's options: memory per
    accelerator ("16GiB"), platform preset or JSON file ("a100"), dims binds
    symbolic dimensions ({"batch_size": 8}), time_limit bounds the whole run
    in seconds (None: the algorithms' own limits), training derives the
    backward pass, cpus CPU cores (-1: the platform's), stages also cuts one
    model per stage, dot/trace also draw the plan and replay its schedule,
    schedule ("gpipe" or "1f1b") prices the stages for `microbatches`."""
    data, path, name = _model_input(model)
    raw = _core.partition(data, path, name, int(devices), int(cpus), str(algo), str(memory), str(platform),
                          {str(k): int(v) for k, v in (dims or {}).items()},
                          None if time_limit is None else float(time_limit), bool(training), bool(stages),
                          bool(dot), bool(trace), str(schedule), int(microbatches))
    if "error" in raw:
        raise PartitionError(raw["error"], raw["exit_code"])
    return PartitionResult(raw)
