//===- Support/OutputPaths.cpp - Outputs never clobber inputs -----------===//
#include "onnx-partition/Support/OutputPaths.h"

#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/OutputTransaction.h"

#include <filesystem>
#include <regex>

using namespace onnxp;
namespace fs = std::filesystem;

namespace {
std::string describe(const NamedPath &P) {
  return P.flag == "the input" ? P.flag : P.flag + " '" + P.path + "'";
}
} // namespace

bool onnxp::isStageFileName(const std::string &Name) {
  static const std::regex StageFile(R"(stage[0-9]+_[A-Za-z0-9]+\.onnx(\.data)?)");
  return Name == "pipeline.json" || Name == "pipeline_actions.csv" || std::regex_match(Name, StageFile);
}

Error onnxp::checkDistinctOutputs(const std::vector<NamedPath> &Inputs, const std::vector<NamedPath> &Outputs,
                                  const NamedPath &StagesDir) {
  for (size_t I = 0; I < Outputs.size(); ++I) {
    const NamedPath &Out = Outputs[I];
    if (Out.path.empty()) continue;
    for (const NamedPath &In : Inputs)
      if (!In.path.empty() && samePath(In.path, Out.path))
        return makeUsageError(Out.flag, " '", Out.path, "' is the same file as ", describe(In),
                              "; each output needs its own file");
    for (size_t J = 0; J < I; ++J)
      if (!Outputs[J].path.empty() && samePath(Outputs[J].path, Out.path) && !isCharDevice(Out.path))
        return makeUsageError(Out.flag, " '", Out.path, "' is the same file as ", Outputs[J].flag,
                              "; each output needs its own file");
  }
  if (StagesDir.path.empty()) return Error::success();
  for (const std::vector<NamedPath> *List : {&Inputs, &Outputs})
    for (const NamedPath &P : *List)
      if (!P.path.empty() && samePath(P.path, StagesDir.path))
        return makeUsageError(StagesDir.flag, " '", StagesDir.path, "' is the same path as ", P.flag);
  for (const NamedPath &In : Inputs) {
    if (In.path.empty()) continue;
    fs::path Parent = fs::path(In.path).parent_path();
    if (samePath(Parent.empty() ? "." : Parent.string(), StagesDir.path) &&
        isStageFileName(fs::path(In.path).filename().string()))
      return makeUsageError(
          describe(In), " is in the ", StagesDir.flag, " folder '", StagesDir.path,
          "' under a name the run writes or replaces there; move it or choose another folder");
  }
  return Error::success();
}
