//===- Cost/OrtProfile.cpp - Kernel times from an ONNX Runtime profile --===//
//
// The format is ONNX Runtime's profiler output (onnxruntime/core/common/
// profiler.cc): a JSON array of {"cat", "pid", "tid", "dur", "ts", "ph",
// "name", "args"} objects. We are strict about what we use (a kernel-time
// event must have a numeric "dur" >= 0 and an object "args" with a string
// "op_name") and ignore every other event, so profiles of newer ORT
// versions with extra events still load.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/OrtProfile.h"

#include "onnx-partition/Support/FileIO.h"

#include <nlohmann/json.hpp>

using namespace onnxp;

Expected<OrtProfile> onnxp::parseOrtProfile(const std::string &Text, const std::string &Path) {
  nlohmann::json J;
  try {
    J = nlohmann::json::parse(Text);
  } catch (const std::exception &Ex) {
    return makeError(Path, ": not an ONNX Runtime profile: not valid JSON: ", Ex.what());
  }
  if (!J.is_array())
    return makeError(Path, ": not an ONNX Runtime profile: expected a JSON array of trace events");
  OrtProfile P;
  P.path = Path;
  static const std::string Suffix = "_kernel_time";
  for (size_t I = 0; I < J.size(); ++I) {
    const nlohmann::json &Ev = J[I];
    if (!Ev.is_object()) return makeError(Path, ": event ", I, " is not an object");
    auto Cat = Ev.find("cat");
    auto Name = Ev.find("name");
    if (Cat == Ev.end() || !Cat->is_string() || *Cat != "Node") continue;
    if (Name == Ev.end() || !Name->is_string())
      return makeError(Path, ": event ", I, " (cat Node) has no string \"name\"");
    std::string N = Name->get<std::string>();
    if (N.size() <= Suffix.size() || N.compare(N.size() - Suffix.size(), Suffix.size(), Suffix) != 0)
      continue; // fences and other per-node markers
    N = N.substr(0, N.size() - Suffix.size());
    auto Dur = Ev.find("dur");
    if (Dur == Ev.end() || !Dur->is_number() || Dur->get<double>() < 0)
      return makeError(Path, ": event ", I, " ('", N, "_kernel_time') has no numeric \"dur\" >= 0");
    auto Args = Ev.find("args");
    if (Args == Ev.end() || !Args->is_object() || !Args->contains("op_name") ||
        !(*Args)["op_name"].is_string())
      return makeError(Path, ": event ", I, " ('", N, "_kernel_time') has no \"args\".\"op_name\"");
    OrtNodeTiming &T = P.nodes[N];
    T.op = (*Args)["op_name"].get<std::string>();
    if (Args->contains("provider") && (*Args)["provider"].is_string())
      T.provider = (*Args)["provider"].get<std::string>();
    T.totalUs += Dur->get<double>();
    ++T.runs;
  }
  if (P.nodes.empty())
    return makeError(Path, ": the profile holds no \"<node>_kernel_time\" events (was it written with "
                           "profiling enabled and at least one run?)");
  return P;
}

Expected<OrtProfile> onnxp::loadOrtProfile(const std::string &Path) {
  Expected<std::string> Text = readFile(Path, kMaxProfileBytes, "an ONNX Runtime profile");
  if (!Text) return Text.takeError().withContext("--profile");
  return parseOrtProfile(*Text, Path);
}
