//===- python/Module.cpp - The _onnx_partition extension module ----------===//
//
// The C++ half of `import onnx_partition` (onnx_partition/__init__.py is the
// other): partition() runs compileModel() on model bytes in memory, with the
// GIL released, and hands back the results as bytes and text; main() runs
// the tool itself (toolMain) for `python3 -m onnx_partition`. Errors come
// back as (message, exit code), raised by the Python side as one exception
// type.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"

#include "onnx-partition/Compiler.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <iostream>

namespace py = pybind11;
using namespace onnxp;

namespace {

/// The results, or the error as {"error": message, "exit_code": code}.
py::dict partition(const py::bytes &Model, const std::string &Path, const std::string &Name, int Devices,
                   int Cpus, const std::string &Algo, const std::string &Memory, const std::string &Platform,
                   const std::map<std::string, int64_t> &Dims, std::optional<double> TimeLimit, bool Training,
                   bool Stages, bool Dot, bool Trace, const std::string &Schedule, int Microbatches) {
  CompileOptions O;
  O.dims = Dims;
  O.training = Training;
  O.platform.platform = Platform;
  O.platform.devices = Devices;
  O.platform.cpus = Cpus;
  O.platform.memory = Memory;
  O.algorithm = Algo;
  O.extractStages = Stages;
  O.dot = Dot;
  O.trace = Trace;
  O.outputs.schedule = Schedule;
  O.outputs.microbatches = Microbatches;
  if (TimeLimit) {
    // As the tool's --time-limit: a bound on the whole run.
    O.partition.timeLimitSeconds = *TimeLimit;
    O.partition.timeLimitGiven = true;
    O.partition.deadline =
        std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double>(*TimeLimit));
  }
  std::string Bytes = Path.empty() ? std::string(Model) : std::string();
  Expected<CompileResult> R = [&] {
    py::gil_scoped_release Unlocked;
    try {
      return Path.empty() ? compileModel(Bytes, Name, O) : compile(Path, O);
    } catch (const std::exception &Ex) {
      // Library code returns errors; a dependency (protobuf, ONNX) may throw.
      return Expected<CompileResult>(makeError(Ex.what()));
    }
  }();
  py::dict D;
  if (!R) {
    Error E = R.takeError();
    D["error"] = E.message();
    D["exit_code"] = E.exitCode();
    return D;
  }
  std::string Annotated;
  if (R->annotated && !R->annotated->SerializeToString(&Annotated)) {
    D["error"] = "cannot serialize the annotated model";
    D["exit_code"] = 1;
    return D;
  }
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
  return D;
}

/// The tool on Argv (Argv[0] is the program name); its exit code.
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
  M.def("partition", &partition, py::arg("model"), py::arg("path"), py::arg("name"), py::arg("devices"),
        py::arg("cpus"), py::arg("algo"), py::arg("memory"), py::arg("platform"), py::arg("dims"),
        py::arg("time_limit"), py::arg("training"), py::arg("stages"), py::arg("dot"), py::arg("trace"),
        py::arg("schedule"), py::arg("microbatches"));
  M.def("main", &toolMain, py::arg("argv"));
}
