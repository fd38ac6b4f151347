//===- Import/InputLoader.cpp - Any supported input by content ----------===//
#include "onnx-partition/Import/InputLoader.h"

#include "onnx-partition/Support/FileIO.h"

using namespace onnxp;

Expected<LoadedInput> onnxp::loadInput(const std::string &Path) {
  Expected<std::string> Text = readFile(Path);
  if (!Text) return Text.takeError();
  LoadedInput L;
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
