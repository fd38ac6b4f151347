//===- Import/InputLoader.cpp - Any supported input by content ----------===//
#include "onnx-partition/Import/InputLoader.h"

#include "onnx-partition/Import/ChainJson.h"
#include "onnx-partition/Import/PipeDreamProfile.h"
#include "onnx-partition/Import/PiperImporter.h"
#include "onnx-partition/Support/FileIO.h"

#include <nlohmann/json.hpp>

using namespace onnxp;

namespace {
/// A chain JSON names its format; checked before the workload test, which
/// only looks for "nodes" and "edges" keys.
bool looksLikeChainJson(const std::string &Text) {
  size_t I = Text.find_first_not_of(" \t\r\n");
  if (I == std::string::npos || Text[I] != '{' || Text.find("onnx-partition-chain") == std::string::npos)
    return false;
  nlohmann::json J = nlohmann::json::parse(Text, nullptr, /*allow_exceptions=*/false);
  return J.is_object() && J.value("format", "") == "onnx-partition-chain";
}
} // namespace

Expected<LoadedInput> onnxp::loadInput(const std::string &Path, const InputLoadOptions &O) {
  Expected<std::string> Text =
      readFile(Path, kMaxModelFileBytes,
               "MODEL (an ONNX model is at most 2 GiB; larger ones keep weights in external data)");
  if (!Text) return Text.takeError();
  // A UTF-8 byte order mark before a JSON or text input (issue 39, item 6);
  // no ONNX protobuf starts with 0xEF (wire type 7 does not exist).
  if (Text->rfind("\xEF\xBB\xBF", 0) == 0) Text->erase(0, 3);
  LoadedInput L;
  if (looksLikeChainJson(*Text)) {
    Expected<Chain> C = parseChainJson(*Text, Path);
    if (!C) return C.takeError();
    L.chain = std::move(*C);
    L.kind = "chain-json";
    return L;
  }
  if (looksLikePipeDreamProfile(*Text)) {
    Expected<PipeDreamProfile> P = parsePipeDreamProfile(*Text, Path);
    if (!P) return P.takeError();
    Expected<Chain> C =
        makeUsageError("--chain-recipe for a PipeDream profile must be separators, layers or graph, not '",
                       chainRecipeName(O.chainRecipe), "'");
    if (O.chainRecipe == ChainRecipe::Separators) C = chainFromSeparators(*P);
    else if (O.chainRecipe == ChainRecipe::Layers) C = chainFromLayers(*P);
    else if (O.chainRecipe == ChainRecipe::Graph) C = chainFromGraph(*P);
    if (!C) return C.takeError();
    L.chain = std::move(*C);
    L.kind = "pipedream-profile";
    return L;
  }
  if (looksLikePiper(*Text)) {
    Expected<Chain> C = parsePiperChain(*Text, Path, O.piper);
    Expected<PiperInstance> I = parsePiperInstance(*Text, Path);
    if (!C && !I) return C.takeError();
    if (C) L.chain = std::move(*C);
    else L.chainError = C.takeError().message();
    if (I) L.piper = std::move(*I);
    else L.piperError = I.takeError().message();
    L.kind = "piper";
    return L;
  }
  if (looksLikeWorkload(*Text)) {
    Expected<Workload> W = parseWorkload(*Text, Path);
    if (!W) return W.takeError();
    L.workload = std::move(*W);
    L.kind = "workload";
    return L;
  }
  Expected<OnnxModel> M = loadOnnxModel(Path, *Text);
  if (!M) return M.takeError();
  L.kind = M->format == "text" ? "onnx-text" : "onnx-binary";
  L.model = std::move(*M);
  return L;
}
