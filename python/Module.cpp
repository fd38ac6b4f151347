//===- python/Module.cpp - The _onnx_partition extension module ----------===//
//
// The C++ half of `import onnx_partition` (onnx_partition/__init__.py is the
// other). partition() hands the keywords, turned into the tool's long
// options, to the library's own parser (API/CommandLine.h) and runs the
// library's compile() on the model in memory or on its path, with the GIL
// released: the same request, the same checks and messages, the same plan
// as the tool (issue 32, item 1). Files the options name are written
// through one output transaction, as the tool writes them. main() runs the
// tool itself (Tool.h) for `python3 -m onnx_partition`. Errors come back as
// (message, exit code), raised by the Python side as one exception type.
// Nothing here includes the tool's sources.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/CommandLine.h"
#include "onnx-partition/Compiler.h"
#include "onnx-partition/Support/OutputTransaction.h"
#include "onnx-partition/Tool.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>

namespace py = pybind11;
using namespace onnxp;

namespace {

py::dict errorDict(const Error &E) {
  py::dict D;
  D["error"] = E.message();
  D["exit_code"] = E.exitCode();
  return D;
}

bool namesFiles(const OutputOptions &O) {
  return !O.output.empty() || !O.report.empty() || !O.trace.empty() || !O.memorySweep.empty() ||
         !O.emitStages.empty() || !O.emitRecomputeCheck.empty() || !O.dot.empty();
}

/// The request run as the tool runs it: compile, the files it names
/// committed together, the memory sweep's table on stdout.
Expected<CompileResult> run(const std::string &Bytes, const std::string &Path, const std::string &Name,
                            const CompileOptions &O) {
  // The output transaction's signal handlers go when the call ends (issue
  // 39, item 7): Ctrl-C in the interpreter stays Python's.
  SavedSignalHandlers Signals;
  const bool Files = namesFiles(O.outputs);
  if (Files)
    if (Error E = checkOutputPaths(O)) return E;
  OutputTransaction Tx;
  Expected<CompileResult> R =
      Path.empty() ? compileModel(Bytes, Name, O, Files ? &Tx : nullptr) : compile(O, Files ? &Tx : nullptr);
  if (!R || !Files) return R;
  if (Error E = Tx.commit()) return E;
  if (Error E = writeMemorySweep(*R, O, std::cout)) return E;
  return R;
}

/// The results, or the error as {"error": message, "exit_code": code}.
/// Args are the tool's options (no MODEL); the flags ask for the in-memory
/// results besides the report.
py::dict partition(const py::bytes &Model, const std::string &Path, const std::string &Name,
                   const std::vector<std::string> &Args, bool Annotate, bool Stages, bool Dot, bool Trace) {
  CompileOptions O;
  O.dumpStream = &std::cout;
  O.logStream = &std::cerr;
  std::vector<std::string> Argv = {Path.empty() ? Name : Path};
  Argv.insert(Argv.end(), Args.begin(), Args.end());
  if (Error E = parseCompileArguments(Argv, O)) return errorDict(E);
  O.annotate = Annotate;
  O.extractStages = Stages;
  O.dot = Dot;
  O.trace = Trace;
  std::string Bytes = Path.empty() ? std::string(Model) : std::string();
  Expected<CompileResult> R = [&] {
    py::gil_scoped_release Unlocked;
    Expected<CompileResult> Out = makeError("no result");
    try {
      Out = run(Bytes, Path, Name, O);
    } catch (const std::exception &Ex) {
      // Library code returns errors; a dependency (protobuf, ONNX) may throw.
      Out = Expected<CompileResult>(makeError(Ex.what()));
    }
    std::cout.flush();
    std::cerr.flush();
    return Out;
  }();
  if (!R) return errorDict(R.takeError());
  py::dict D;
  if (!R->planned)
    return errorDict(makeUsageError("the pipeline '", O.passes, "' made no plan; add 'partition'"));
  std::string Annotated;
  if (R->annotated && !R->annotated->SerializeToString(&Annotated))
    return errorDict(makeError("cannot serialize the annotated model"));
  D["model"] = R->annotated ? py::object(py::bytes(Annotated)) : py::object(py::none());
  py::list StageList;
  if (R->stages)
    for (const StageModel &S : R->stages->stages) {
      std::string B;
      S.model.SerializeToString(&B);
      StageList.append(py::make_tuple(S.fileName, py::bytes(B)));
    }
  D["stages"] = StageList;
  D["pipeline"] = R->stages ? R->stages->json : std::string();
  D["report"] = R->reportJson;
  D["summary"] = R->summary;
  D["dot"] = R->dot;
  D["trace"] = R->trace;
  D["ort_layer_assignment"] = R->ortLayerAssignment;
  D["notes"] = R->notes;
  return D;
}

/// The tool's long options: (name, takes a value, repeatable).
std::vector<std::tuple<std::string, bool, bool>> optionNames() {
  std::vector<std::tuple<std::string, bool, bool>> R;
  for (const CompileOptionName &N : compileOptionNames()) R.emplace_back(N.name, N.takesValue, N.repeatable);
  return R;
}

/// The tool on Argv (Argv[0] is the program name; empty: no arguments);
/// its exit code.
int toolMain(std::vector<std::string> Argv) {
  std::vector<char *> Ptrs;
  for (std::string &A : Argv) Ptrs.push_back(A.data());
  Ptrs.push_back(nullptr);
  int Code = 0;
  {
    py::gil_scoped_release Unlocked;
    Code = onnxp::tool::toolMain(static_cast<int>(Argv.size()), Ptrs.data());
    std::cout.flush();
    std::cerr.flush();
  }
  return Code;
}

} // namespace

PYBIND11_MODULE(_onnx_partition, M) {
  M.doc() = "onnx-partition compiler (see onnx_partition.partition)";
  M.def("partition", &partition, py::arg("model"), py::arg("path"), py::arg("name"), py::arg("args"),
        py::arg("annotate"), py::arg("stages"), py::arg("dot"), py::arg("trace"));
  M.def("option_names", &optionNames);
  M.def("main", &toolMain, py::arg("argv"));
}
