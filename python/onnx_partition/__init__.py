"""onnx_partition: the onnx-partition compiler as a Python module.

    import onnx, onnx_partition as op
    r = op.partition(onnx.load("model.onnx"), devices=4, algo="auto",
                     memory="16GiB", platform="a100", dim={"batch_size": 8})
    onnx.save(r.model, "model.partitioned.onnx")   # annotated with the plan
    for name, stage in zip(r.stage_files, r.stages): onnx.save(stage, name)
    print(r.summary())

The model is an onnx.ModelProto, the bytes of one, or a path; it is handed
to the C++ library in memory (no temporary file). Every keyword is one of
the tool's long options with "_" for "-" (time_limit=60 is --time-limit 60,
training=True is --training); the C++ side parses them with the tool's own
parser and runs the library's compile(), so a request gives the tool's plan,
checks and messages. Errors raise PartitionError with the tool's message and
exit code (1 bad input, 2 usage); an unknown keyword raises TypeError.
`python3 -m onnx_partition ARGS` runs the command-line tool.
"""
import json
import os

from onnx_partition import _onnx_partition as _core

__all__ = ["partition", "main", "option_names", "PartitionError", "PartitionResult"]


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
    report_json           the same document as text, byte for byte what --report writes
    notes                 the run's notes (assumptions and fallbacks)
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
        self.report_json = raw["report"]
        self.report = json.loads(raw["report"])
        self.notes = list(raw["notes"])
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


def option_names():
    """The keywords partition() takes for the tool's options (its long
    options with "_" for "-"), sorted."""
    return sorted(name.replace("-", "_") for name, _, _ in _core.option_names())


def _text(key, value):
    """One option value as the tool would read it on its command line."""
    if isinstance(value, bool):
        raise TypeError("%s takes a value, not %r" % (key, value))
    if isinstance(value, float):
        # 8.0 is "8" (an integer option reads it), nan, inf and 1e300 stay
        # themselves for the tool's range checks.
        if value.is_integer() and abs(value) < 2 ** 53:
            return str(int(value))
        return repr(value)
    if isinstance(value, (str, int, os.PathLike)):
        return os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    raise TypeError("%s must be a string or a number, not %s" % (key, type(value).__name__))


def _arguments(options):
    """The keywords as the tool's command-line arguments (--name=value, so a
    value such as -1 is never taken for an option)."""
    table = {name.replace("-", "_"): (name, takes, repeatable) for name, takes, repeatable in _core.option_names()}
    args = []
    for key, value in options.items():
        if key not in table:
            raise TypeError("partition() got an unexpected keyword argument %r (its keywords are the tool's long "
                            "options with _ for -, see onnx_partition.option_names())" % key)
        name, takes, repeatable = table[key]
        if value is None:
            continue
        if not takes:
            if not isinstance(value, bool):
                raise TypeError("%s is a flag: True or False, not %r" % (key, value))
            if value:
                args.append("--" + name)
            continue
        if isinstance(value, dict):
            values = ["%s=%s" % (k, _text(key, v)) for k, v in value.items()]
        elif isinstance(value, (list, tuple)):
            values = [_text(key, v) for v in value]
        else:
            values = [_text(key, value)]
        if len(values) > 1 and not repeatable:
            raise TypeError("%s takes one value, not %d" % (key, len(values)))
        args += ["--%s=%s" % (name, v) for v in values]
    return args


def partition(model, dims=None, stages=True, annotate=True, dot=False, trace=False, **options):
    """Partitions `model` as `onnx-partition MODEL --name value ...` does and
    returns a PartitionResult. Every keyword in `options` is one of the
    tool's long options with "_" for "-" (onnx_partition.option_names()):
    devices=4, algo="dp", memory="16GiB", platform="a100",
    dim={"batch_size": 8} (or a list of "NAME=VALUE"), time_limit=60,
    training=True, schedule="1f1b", microbatches=8, report="plan.json"
    (written, with every other file an option names, as the tool writes
    them). A flag takes True or False; None leaves an option out.

    Besides: dims is dim (the earlier spelling); stages and annotate build
    the stage models and the annotated model in memory (ONNX input); dot and
    trace make the picture and the trace in memory when True, and write
    them too when a path."""
    data, path, name = _model_input(model)
    if dims is not None:
        if "dim" in options:
            raise TypeError("give dim or dims, not both")
        options["dim"] = dims
    for key, value in (("dot", dot), ("trace", trace)):
        if not isinstance(value, bool):
            options[key] = value
    raw = _core.partition(data, path, name, _arguments(options), bool(annotate), bool(stages), bool(dot),
                          bool(trace))
    if "error" in raw:
        raise PartitionError(raw["error"], raw["exit_code"])
    return PartitionResult(raw)


def main(args=None):
    """Runs the onnx-partition tool on args (default: sys.argv[1:]), in this
    process, and returns its exit code."""
    import sys

    return _core.main(["onnx-partition"] + list(sys.argv[1:] if args is None else args))
